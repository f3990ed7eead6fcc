import { usage } from './errors.js';

export interface ParsedArgs {
  /** Values by flag name (without dashes), in the order given; `true` for a bare boolean flag. */
  options: Map<string, Array<string | true>>;
  positionals: string[];
}

export interface ArgSpec {
  /** Flags that take no value (`--json`); `--flag true|false` and `--flag=false` work too. */
  booleans: ReadonlySet<string>;
  /** Short forms: `-f` → `follow`. */
  aliases?: Readonly<Record<string, string>>;
}

/** Splits argv into flags and positionals; `--` ends the flags. Values are never interpreted by a shell. */
export function parseArgs(argv: string[], spec: ArgSpec): ParsedArgs {
  const options = new Map<string, Array<string | true>>();
  const positionals: string[] = [];
  const add = (name: string, value: string | true) => options.set(name, [...(options.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (/^-[a-zA-Z]$/.test(arg)) {
      const long = spec.aliases?.[arg.slice(1)];
      if (!long) throw usage(`unknown option ${arg}`);
      name = long;
    } else {
      positionals.push(arg);
      continue;
    }
    if (!name) throw usage(`malformed option ${arg}`);
    if (inline !== undefined) add(name, inline);
    else if (spec.booleans.has(name)) {
      const next = argv[i + 1];
      if (next === 'true' || next === 'false') add(name, argv[++i]!);
      else add(name, true);
    } else {
      if (i + 1 >= argv.length) throw usage(`--${name} needs a value`);
      add(name, argv[++i]!);
    }
  }
  return { options, positionals };
}

/** The one value of a flag (the last one given), or undefined. */
export function single(args: ParsedArgs, name: string): string | true | undefined {
  return args.options.get(name)?.at(-1);
}

export function flagOn(args: ParsedArgs, name: string): boolean {
  const v = single(args, name);
  return v === true || v === 'true';
}

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = single(args, name);
  if (v === true) throw usage(`--${name} needs a value`);
  return v;
}

/** Refuses flags the command does not take, naming them. */
export function onlyFlags(args: ParsedArgs, allowed: Iterable<string>, command: string): void {
  const known = new Set(allowed);
  const unknown = [...args.options.keys()].filter((k) => !known.has(k));
  if (unknown.length) throw usage(`${command} takes no option ${unknown.map((u) => `--${u}`).join(', ')} (see --help)`);
}
