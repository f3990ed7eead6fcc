import { readConfig } from '../config.js';
import { usage } from '../errors.js';
import { fieldsOf } from '../fields.js';
import { OPERATION_FLAGS, findContract, routers } from '../operations.js';
import type { Session } from '../session.js';

/** The workflow commands and the flags each takes (besides --json, --help, --context). */
export const WORKFLOWS: Record<string, string[]> = {
  login: ['name', 'api-key-stdin'],
  context: [],
  deploy: ['title', 'no-follow'],
  logs: ['follow', 'tail', 'since', 'service'],
  env: ['file', 'dry-run'],
  status: [],
  export: ['output'],
  apply: ['file', 'dry-run', 'prune'],
  completion: [],
};

const COMMON = ['json', 'help', 'context'];

/** Candidates for the word being completed, given the words before it (`skiff __complete <words…> <current>`). */
export function candidates(words: string[], env: NodeJS.ProcessEnv): string[] {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1).filter((w) => !w.startsWith('-'));
  const [first, second] = before;
  let list: string[];
  if (!first) list = [...Object.keys(WORKFLOWS), ...Object.keys(routers), 'help'];
  else if (Object.hasOwn(WORKFLOWS, first)) {
    if (current.startsWith('-')) list = [...WORKFLOWS[first]!, ...COMMON].map((f) => `--${f}`);
    else if (first === 'context') list = !second ? ['list', 'use', 'remove'] : Object.keys(readConfig(env).contexts);
    else if (first === 'env' && !second) list = ['pull', 'push'];
    else if (first === 'completion' && !second) list = ['bash', 'zsh'];
    else list = [];
  } else if (Object.hasOwn(routers, first)) {
    const contract = second ? findContract(first, second) : undefined;
    if (!second) list = Object.keys(routers[first]!);
    else if (contract) list = [...fieldsOf(contract.input).map((f) => f.flag), ...OPERATION_FLAGS, ...(contract.upload ? ['file'] : [])].map((f) => `--${f}`);
    else list = [];
  } else list = [];
  return list.filter((c) => c.startsWith(current));
}

const BASH = `# skiff completion for bash: source <(skiff completion bash)
_skiff_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(skiff __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _skiff_complete skiff
`;

const ZSH = `#compdef skiff
# skiff completion for zsh: source <(skiff completion zsh), or save as _skiff in your $fpath
_skiff() {
  local -a candidates
  candidates=("\${(@f)$(skiff __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
if [[ "\${funcstack[1]}" = _skiff ]]; then _skiff "$@"; else compdef _skiff skiff; fi
`;

export async function completion(s: Session): Promise<void> {
  const [shell, ...extra] = s.args.positionals;
  if (extra.length || (shell !== 'bash' && shell !== 'zsh')) throw usage('usage: skiff completion bash|zsh');
  s.io.out(shell === 'bash' ? BASH : ZSH);
}
