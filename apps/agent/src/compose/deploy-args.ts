/**
 * What a stack's deploy runs, from the command's `command` (the custom command, split by the
 * control plane) or the compose type's default (libs/domain DEFAULT_COMPOSE_COMMANDS), checked
 * again here with the control plane's rules (libs/domain checkComposeCommand: only compose
 * subcommands that bring a stack up, never an option naming another project, file, env file,
 * host or context).
 *
 * On top of the check: `up` without `-d`/`--detach`/`--wait` gets `-d` (an attached `up` would
 * run until the deadline), and the deploy waits until the services run only after `up`,
 * `start` or `restart` (`create`, `pull` and `build` end with their program). The services
 * waited for: those `up` names, else every service of the file whose profiles are active and
 * whose scale is not 0.
 */
import { checkComposeCommand, DEFAULT_COMPOSE_COMMANDS, type ComposeTypeName } from '@skiff/domain';
import type { ServiceOutline } from './deployed-file.js';

export interface DeployArgs {
  /** The arguments after the program (Compose) or after `docker stack` (a Swarm stack). */
  args: string[];
  /** Whether the deploy then waits for the services to run. */
  waits: boolean;
  /** Services `up` names; empty: all. */
  named: string[];
  /** Profiles `--profile` turns on. */
  profiles: string[];
  /** What was added to the command, for the log. */
  notes: string[];
}

/** Options of `up` that take a value (the next argument, unless written `--opt=value`). */
const UP_VALUE_OPTIONS = new Set(['--scale', '-t', '--timeout', '--pull', '--wait-timeout', '--exit-code-from', '--attach', '--no-attach']);
const WAITING_SUBCOMMANDS = new Set(['up', 'start', 'restart']);

/** Throws ComposeCommandError (from libs/domain) when the custom command is refused. */
export function deployArgs(type: ComposeTypeName, command: readonly string[]): DeployArgs {
  const args = command.length > 0 ? checkComposeCommand(type, command) : [...DEFAULT_COMPOSE_COMMANDS[type]];
  if (type === 'stack') return { args, waits: true, named: [], profiles: [], notes: [] };
  const profiles: string[] = [];
  let at = 0;
  while (at < args.length && args[at]!.startsWith('-')) {
    const arg = args[at]!;
    if (arg === '--profile') profiles.push(args[(at += 1)] ?? '');
    else if (arg.startsWith('--profile=')) profiles.push(arg.slice('--profile='.length));
    at += 1;
  }
  const subcommand = args[at] ?? '';
  const rest = args.slice(at + 1);
  const notes: string[] = [];
  const named: string[] = [];
  if (subcommand === 'up') {
    if (!rest.some((a) => a === '-d' || a === '--detach' || a === '--wait' || a.startsWith('--wait='))) {
      args.splice(at + 1, 0, '-d');
      notes.push('added -d to `up`: a deploy runs the stack detached');
    }
    for (let i = 0; i < rest.length; i += 1) {
      const arg = rest[i]!;
      if (UP_VALUE_OPTIONS.has(arg)) i += 1;
      else if (!arg.startsWith('-')) named.push(arg);
    }
  }
  return { args, waits: WAITING_SUBCOMMANDS.has(subcommand), named, profiles, notes };
}

/** The services a deploy waits for (see the module comment). */
export function servicesToWait(services: readonly ServiceOutline[], deploy: Pick<DeployArgs, 'named' | 'profiles'>): string[] {
  if (deploy.named.length > 0) return services.filter((s) => deploy.named.includes(s.name)).map((s) => s.name);
  return services
    .filter((s) => s.replicas !== 0 && (s.profiles.length === 0 || s.profiles.some((p) => deploy.profiles.includes(p))))
    .map((s) => s.name);
}
