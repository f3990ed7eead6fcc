import { readFileSync } from 'node:fs';
import { type ArgSpec, flagOn, parseArgs, stringFlag } from './args.js';
import { WORKFLOWS, candidates, completion } from './commands/completion.js';
import { apply, exportCommand } from './commands/declarative.js';
import { env } from './commands/env.js';
import { context, login } from './commands/login.js';
import { deploy, logs, status } from './commands/workflows.js';
import { CliError, EXIT, usage } from './errors.js';
import { fieldsOf } from './fields.js';
import { findContract, inputFromArgs, operationHelp, routerHelp, routers } from './operations.js';
import { type Io, human, processIo } from './output.js';
import { type Session, createSession } from './session.js';
import { didYouMean } from './suggest.js';
import { multipartBody, uploadFile, uploadLimit } from './upload.js';
import pkg from '../package.json' with { type: 'json' };

const HELP = `skiff: drive a Skiff platform from the command line

Usage:
  skiff login <url> [--name <context>] [--api-key-stdin]   store a server and its API key as a context
  skiff context list | use <name> | remove <name>
  skiff status [project]                          workloads with their state
  skiff deploy <application> [--title text]       deploy and follow the log to its end
  skiff logs <workload> [-f] [--tail N] [--since time] [--service name]
  skiff env pull|push <workload> [--file .env] [--dry-run]
  skiff export <project> [-o skiff.yaml]          the project as YAML (no secret values)
  skiff apply -f skiff.yaml [--dry-run]           make the platform match the file
  skiff completion bash|zsh                       shell completion script
  skiff <router> <operation> [--field value…]     any API operation (skiff <router> --help lists them)

Every command takes --json (output for scripts), --context <name> and --help.
SKIFF_URL and SKIFF_API_KEY override the current context.
Exit codes: 0 ok, 1 refused by the server (or a deployment failed), 2 usage or invalid input,
3 server unreachable.

Routers: ${Object.keys(routers).join(', ')}
`;

const COMMANDS: Record<string, (s: Session) => Promise<void>> = {
  login,
  context,
  deploy,
  logs,
  env,
  status,
  export: exportCommand,
  apply,
  completion,
};

const WORKFLOW_SPEC: ArgSpec = {
  booleans: new Set(['json', 'help', 'follow', 'api-key-stdin', 'dry-run', 'no-follow']),
  aliases: { h: 'help', o: 'output' },
};

function readStdinSync(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** Runs one command line; answers the exit code. */
export async function run(argv: string[], io: Io, readStdin = readStdinSync): Promise<number> {
  try {
    const [first, second] = argv;
    if (first === '__complete') {
      io.out(candidates(argv.slice(1), io.env).map((c) => `${c}\n`).join(''));
      return EXIT.ok;
    }
    if (!first || first === 'help' || first === '--help' || first === '-h') {
      io.out(HELP);
      return first || argv.length ? EXIT.ok : EXIT.usage;
    }
    if (first === '--version' || first === 'version') {
      io.out(`${pkg.version}\n`);
      return EXIT.ok;
    }
    if (Object.hasOwn(COMMANDS, first)) {
      const aliases = { ...WORKFLOW_SPEC.aliases, ...(first === 'logs' ? { f: 'follow', n: 'tail' } : first === 'apply' ? { f: 'file' } : {}) };
      const args = parseArgs(argv.slice(1), { ...WORKFLOW_SPEC, aliases });
      if (flagOn(args, 'help')) {
        io.out(`${HELP.split('\n').filter((l) => l.startsWith(`  skiff ${first}`)).join('\n')}\n  flags: ${[...WORKFLOWS[first]!, 'json', 'context'].map((f) => `--${f}`).join(' ')}\n`);
        return EXIT.ok;
      }
      await COMMANDS[first]!(createSession(io, args, readStdin));
      return EXIT.ok;
    }
    if (!Object.hasOwn(routers, first)) throw usage(`unknown command "${first}"${didYouMean(first, [...Object.keys(COMMANDS), ...Object.keys(routers)])} (skiff --help lists them)`);
    if (!second || second === '--help' || second === '-h' || second === 'help') {
      io.out(routerHelp(first));
      return second ? EXIT.ok : EXIT.usage;
    }
    const contract = findContract(first, second);
    if (!contract) throw usage(`${first} has no operation "${second}"${didYouMean(second, Object.keys(routers[first]!))} (skiff ${first} --help lists them)`);
    const booleans = new Set(['json', 'help', ...fieldsOf(contract.input).filter((f) => f.kind === 'boolean').map((f) => f.flag)]);
    const args = parseArgs(argv.slice(2), { booleans, aliases: { h: 'help' } });
    if (flagOn(args, 'help')) {
      io.out(operationHelp(contract));
      return EXIT.ok;
    }
    if (args.positionals.length) throw usage(`unexpected argument "${args.positionals[0]}": fields are given as --flag value`);
    const filePath = contract.upload ? stringFlag(args, 'file') : undefined;
    if (contract.upload) args.options.delete('file');
    const session = createSession(io, args, readStdin);
    const input = inputFromArgs(contract, args, readStdin);
    const result = contract.upload
      ? await session.client().upload(contract, multipartBody(input, await uploadFile(contract.upload, filePath, uploadLimit(io.env))))
      : await session.client().call(contract, input);
    io.out(session.json ? `${JSON.stringify(result, null, 2)}\n` : human(io, result));
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`skiff: ${err.message}\n`);
      for (const i of err.issues) io.err(`  ${i.path}: ${i.message}\n`);
      return err.code;
    }
    io.err(`skiff: unexpected error: ${(err as Error).message}\n`);
    return EXIT.refused;
  }
}

/** The `skiff` program (bin/skiff.mjs). */
export async function main(): Promise<void> {
  process.exitCode = await run(process.argv.slice(2), processIo());
}
