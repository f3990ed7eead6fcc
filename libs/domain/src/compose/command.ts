/**
 * The compose program's arguments for a stack's deploy: the default one of its compose type, or
 * the stack's custom `command`, which may only be a compose command (REFERENCE.md, issue 6).
 *
 * The arguments are those after the program (`docker compose` / `docker-compose` for
 * `container-compose`, `docker stack` for `stack`); the agent adds the project name and the
 * file itself (`-p <appName> -f <file>` before them; for a stack `-c <file>` and the stack name
 * after them). A custom command is split like a shell would split words (`splitCommand`: no
 * shell ever runs it) and then checked:
 *
 * - a leading program name as users type it (`docker compose`, `docker-compose`, `docker stack`)
 *   is dropped;
 * - `container-compose`: optional `--profile <name>` / `--compatibility` global options, then
 *   one of the subcommands that bring a stack up (`up`, `create`, `start`, `restart`, `pull`,
 *   `build`), then that subcommand's options and service names;
 * - `stack`: `deploy` (or its alias `up`) with only the options `--prune`,
 *   `--with-registry-auth`, `--resolve-image <always|changed|never>`, `-q`/`--quiet`,
 *   `-d`/`--detach[=true|false]` (a stack name or a file of the user's would deploy something
 *   else than the stack);
 * - nowhere an option that names another project, file, directory, env file, host or context
 *   (`-p`, `-f`, `-c`, `--project-name`, `--file`, `--project-directory`, `--env-file`,
 *   `--compose-file`, `-H`, `--host`, `--context`, `--config`): the stack is always the one Skiff
 *   wrote, under its own name.
 */
import { CommandSplitError, splitCommand } from '../argv.js';

export type ComposeTypeName = 'container-compose' | 'stack';

export class ComposeCommandError extends Error {
  override name = 'ComposeCommandError';
}

/** What runs when a stack has no custom command. */
export const DEFAULT_COMPOSE_COMMANDS: Readonly<Record<ComposeTypeName, readonly string[]>> = {
  'container-compose': ['up', '-d', '--build', '--remove-orphans'],
  stack: ['deploy', '--prune', '--with-registry-auth'],
};

const COMPOSE_SUBCOMMANDS = new Set(['up', 'create', 'start', 'restart', 'pull', 'build']);
const STACK_SUBCOMMANDS = new Set(['deploy', 'up']);
const PROGRAM_PREFIXES: Record<ComposeTypeName, readonly (readonly string[])[]> = {
  'container-compose': [['docker', 'compose'], ['docker-compose']],
  stack: [['docker', 'stack']],
};

const REFUSED_OPTIONS = new Set([
  '-p', '--project-name', '-f', '--file', '-c', '--compose-file', '--project-directory', '--env-file',
  '-H', '--host', '--context', '--config',
]);

/** The argv of the stack's deploy: the custom command checked, or the type's default when it has none. */
export function composeCommandArgs(composeType: string, command: string | null | undefined): string[] {
  const type = composeTypeName(composeType);
  if (command === null || command === undefined || command.trim() === '') return [...DEFAULT_COMPOSE_COMMANDS[type]];
  let words: string[];
  try {
    words = splitCommand(command);
  } catch (err) {
    if (err instanceof CommandSplitError) throw new ComposeCommandError(err.message);
    throw err;
  }
  return checkComposeCommand(type, words);
}

/** The arguments without a leading program name, after checking them (see the module comment). */
export function checkComposeCommand(composeType: string, argv: readonly string[]): string[] {
  const type = composeTypeName(composeType);
  const args = withoutProgram(type, argv);
  if (args.length === 0) throw new ComposeCommandError('the command names no compose subcommand');
  for (const arg of args) {
    const [option] = splitOption(arg);
    if (REFUSED_OPTIONS.has(option)) throw new ComposeCommandError(`the option ${option} is not allowed: Skiff sets the project, its file and its host`);
  }
  return type === 'stack' ? checkStack(args) : checkCompose(args);
}

function composeTypeName(composeType: string): ComposeTypeName {
  if (composeType === 'container-compose' || composeType === 'stack') return composeType;
  throw new ComposeCommandError(`unknown compose type ${JSON.stringify(composeType)}`);
}

function withoutProgram(type: ComposeTypeName, argv: readonly string[]): string[] {
  for (const prefix of PROGRAM_PREFIXES[type]) {
    if (prefix.every((word, i) => argv[i] === word)) return argv.slice(prefix.length);
  }
  return [...argv];
}

function checkCompose(args: string[]): string[] {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) {
    const [option, value] = splitOption(args[i]!);
    if (option === '--compatibility' && value === null) i += 1;
    else if (option === '--profile') i += value === null ? 2 : 1;
    else throw new ComposeCommandError(`the global option ${option} is not allowed before the subcommand (only --profile and --compatibility)`);
  }
  const subcommand = args[i];
  if (subcommand === undefined || !COMPOSE_SUBCOMMANDS.has(subcommand)) {
    throw new ComposeCommandError(
      `${subcommand === undefined ? 'no subcommand' : `"${subcommand}" is not a compose subcommand Skiff runs`}: use one of ${[...COMPOSE_SUBCOMMANDS].join(', ')}`,
    );
  }
  return args;
}

const STACK_FLAGS = new Set(['--prune', '--with-registry-auth', '-q', '--quiet', '-d', '--detach']);
const RESOLVE_IMAGE = new Set(['always', 'changed', 'never']);

function checkStack(args: string[]): string[] {
  const [subcommand, ...rest] = args;
  if (!STACK_SUBCOMMANDS.has(subcommand!)) {
    throw new ComposeCommandError(`"${subcommand}" is not a stack subcommand Skiff runs: use deploy`);
  }
  for (let i = 0; i < rest.length; i += 1) {
    const [option, value] = splitOption(rest[i]!);
    if (option === '--resolve-image') {
      const chosen = value ?? rest[(i += 1)];
      if (chosen === undefined || !RESOLVE_IMAGE.has(chosen)) throw new ComposeCommandError('--resolve-image takes always, changed or never');
    } else if (option === '--detach' && value !== null) {
      if (value !== 'true' && value !== 'false') throw new ComposeCommandError('--detach takes true or false');
    } else if (!STACK_FLAGS.has(option) || value !== null) {
      throw new ComposeCommandError(
        option.startsWith('-')
          ? `the stack deploy option ${option} is not allowed (only --prune, --with-registry-auth, --resolve-image, --quiet, --detach)`
          : `"${option}": a stack deploy takes no names (Skiff names the stack after its appName)`,
      );
    }
  }
  return args;
}

/** `--name=value` → [--name, value]; anything else → [arg, null]. */
function splitOption(arg: string): [string, string | null] {
  const at = arg.indexOf('=');
  return arg.startsWith('--') && at > 0 ? [arg.slice(0, at), arg.slice(at + 1)] : [arg, null];
}
