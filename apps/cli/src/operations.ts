import { readFileSync } from 'node:fs';
import { type Contract, contracts } from '@skiff/contracts';
import { type ParsedArgs, flagOn, stringFlag } from './args.js';
import { type Issue, usage } from './errors.js';
import { type Field, fieldsOf } from './fields.js';

/** Flags every operation takes besides its input's fields. */
export const OPERATION_FLAGS = ['json', 'help', 'input', 'context'] as const;

export type Routers = Record<string, Record<string, Contract>>;
export const routers = contracts as unknown as Routers;

export function findContract(router: string, operation: string): Contract | undefined {
  const ops = Object.hasOwn(routers, router) ? routers[router] : undefined;
  return ops && Object.hasOwn(ops, operation) ? ops[operation] : undefined;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

function scalarValue(kind: Field['kind'], raw: string, nullable: boolean, issues: Issue[], path: string): unknown {
  if (nullable && kind !== 'string' && raw === 'null') return null;
  if (kind === 'number') return NUMBER.test(raw) ? Number(raw) : raw;
  if (kind === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (kind === 'json') {
    try {
      return JSON.parse(raw);
    } catch {
      issues.push({ path, message: 'not valid JSON' });
      return undefined;
    }
  }
  return raw;
}

function fieldValue(field: Field, values: Array<string | true>, issues: Issue[]): unknown {
  if (field.kind === 'boolean') {
    const last = values.at(-1)!;
    return last === true ? true : scalarValue('boolean', last, field.nullable, issues, field.name);
  }
  const strings = values.map((v) => (v === true ? '' : v));
  if (field.kind === 'array') {
    if (strings.length === 1 && field.nullable && strings[0] === 'null') return null;
    return strings.flatMap((raw) => {
      if (raw.trimStart().startsWith('[')) {
        const parsed = scalarValue('json', raw, false, issues, field.name);
        return Array.isArray(parsed) ? parsed : parsed === undefined ? [] : [parsed];
      }
      return [scalarValue(field.items ?? 'string', raw, false, issues, field.name)];
    });
  }
  if (strings.length > 1) issues.push({ path: field.name, message: `given ${strings.length} times (--${field.flag} takes one value)` });
  return scalarValue(field.kind, strings.at(-1)!, field.nullable, issues, field.name);
}

/**
 * An operation's input from the command line: `--input file.json` (or `-` for stdin) first,
 * then each `--kebab-flag` over it. Unknown flags and fields are issues, as the server's.
 */
export function inputFromArgs(contract: Contract, args: ParsedArgs, readStdin: () => string): Record<string, unknown> {
  const fields = fieldsOf(contract.input);
  const byFlag = new Map(fields.flatMap((f) => [[f.flag, f], [f.name, f]] as const));
  const issues: Issue[] = [];
  let input: Record<string, unknown> = {};
  const file = stringFlag(args, 'input');
  if (file !== undefined) {
    const text = file === '-' ? readStdin() : readFile(file);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw usage(`--input ${file}: not valid JSON`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usage(`--input ${file}: not a JSON object`);
    input = parsed as Record<string, unknown>;
    const known = new Set(fields.map((f) => f.name));
    for (const key of Object.keys(input)) if (!known.has(key)) issues.push({ path: key, message: 'unknown field' });
  }
  for (const [flag, values] of args.options) {
    if ((OPERATION_FLAGS as readonly string[]).includes(flag)) continue;
    const field = byFlag.get(flag);
    if (!field) {
      issues.push({ path: `--${flag}`, message: `unknown option for ${contract.name}` });
      continue;
    }
    const value = fieldValue(field, values, issues);
    if (value !== undefined) input[field.name] = value;
  }
  if (!issues.length) issues.push(...checkInput(contract, input));
  if (issues.length) throw usage(`invalid input for ${contract.name}`, issues);
  return input;
}

/** The contract's own verdict on an input, before anything is sent. */
export function checkInput(contract: Contract, input: Record<string, unknown>): Issue[] {
  const parsed = contract.input.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => ({
    path: i.path.map(String).join('.') || '(input)',
    message: i.code === 'invalid_type' && i.message.includes('received undefined') ? 'required' : i.message,
  }));
}

function readFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw usage(`--input ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export const wantsJson = (args: ParsedArgs) => flagOn(args, 'json');

/** `skiff <router> <operation> --help`: the contract's summary, description and fields. */
export function operationHelp(contract: Contract): string {
  const fields = fieldsOf(contract.input);
  const width = Math.max(0, ...fields.map((f) => f.flag.length + 2));
  const lines = [
    `skiff ${contract.router} ${contract.operation} [--field value…] [--input file.json|-]${contract.upload ? ' --file <path>' : ''} [--json]`,
    '',
    contract.summary,
    ...(contract.description ? ['', wrap(contract.description, 90)] : []),
    '',
    `${contract.method} /api/${contract.name}; needs role ${contract.access.role}${contract.access.grant ? ` (members: ${contract.access.grant})` : ''}`,
    '',
    fields.length ? 'Fields:' : 'No input fields.',
    ...fields.map((f) => {
      const head = `  --${f.flag}`.padEnd(width + 4);
      const notes = [f.type, f.required ? 'required' : 'optional', f.kind === 'array' ? 'repeat the flag or give a JSON list' : f.kind === 'json' ? 'JSON' : ''].filter(Boolean).join(', ');
      return `${head}${notes}${f.description ? `\n${' '.repeat(width + 4)}${f.description}` : ''}`;
    }),
    ...(contract.upload
      ? ['', `Takes a file: --file <path> sends it as the part \`${contract.upload.field}\` (${contract.upload.description}),`, 'with the fields, as multipart/form-data; a file over SKIFF_MAX_ARCHIVE_BYTES (256 MiB by default) is refused before sending.']
      : []),
    '',
    `Example input: ${JSON.stringify(contract.example)}`,
  ];
  return `${lines.join('\n')}\n`;
}

export function routerHelp(router: string): string {
  const ops = routers[router]!;
  const width = Math.max(...Object.keys(ops).map((o) => o.length));
  return [
    `skiff ${router} <operation> [--field value…] [--json]`,
    '',
    'Operations:',
    ...Object.entries(ops).map(([name, c]) => `  ${name.padEnd(width)}  ${c.method.padEnd(4)} ${c.summary}`),
    '',
    `skiff ${router} <operation> --help shows an operation's fields.`,
    '',
  ].join('\n');
}

function wrap(text: string, width: number): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out.join('\n');
}
