/** What a command writes to: the process's streams, or a test's buffers. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Colors: stdout is a terminal and NO_COLOR is unset. */
  color: boolean;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (on: boolean) => unknown };
}

export function processIo(): Io {
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    color: Boolean(process.stdout.isTTY) && !('NO_COLOR' in process.env && process.env.NO_COLOR !== ''),
    env: process.env,
    stdin: process.stdin,
  };
}

const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof CODES;

export function paint(io: Pick<Io, 'color'>, style: Style, text: string): string {
  if (!io.color) return text;
  const [on, off] = CODES[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** The style of a status word: done/running green, error red, queued/idle yellow. */
export function statusStyle(status: string): Style {
  if (/^(done|running|healthy|online|true)$/.test(status)) return 'green';
  if (/^(error|failed|cancelled|unhealthy|offline)$/.test(status)) return 'red';
  return 'yellow';
}

const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const show = (v: unknown) => (v === null || v === undefined ? '-' : String(v).replace(/\s+/g, ' '));

const PREFERRED = /^(.*Id|id|key|name|appName|type|status|applicationStatus|host|title|role|email|createdAt)$/;
/** Values another command takes (`backup.restore`'s `key`, ids): shown whole, however long. */
const WHOLE = /^(.*Id|id|key)$/;

/** Columns worth a table: scalar fields, preferring ids, names and states; at most seven. */
function columnsOf(rows: Record<string, unknown>[]): string[] {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => rows.every((r) => r[k] === undefined || scalar(r[k])));
  const preferred = keys.filter((k) => PREFERRED.test(k));
  return [...preferred, ...keys.filter((k) => !preferred.includes(k) && rows.every((r) => show(r[k]).length <= 40))].slice(0, 7);
}

export function table(io: Pick<Io, 'color'>, rows: Record<string, unknown>[], columns = columnsOf(rows)): string {
  if (!rows.length) return '(none)\n';
  const cells = rows.map((r) => columns.map((c) => (WHOLE.test(c) ? show(r[c]) : show(r[c]).slice(0, 60))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[], style?: (v: string, i: number) => string) =>
    values.map((v, i) => (style ? style(v.padEnd(widths[i]!), i) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  const statusCols = new Set(columns.flatMap((c, i) => (/status$/i.test(c) ? [i] : [])));
  return [
    line(columns.map((c) => c.toUpperCase()), (v) => paint(io, 'bold', v)),
    ...cells.map((row) => line(row, (v, i) => (statusCols.has(i) ? paint(io, statusStyle(v.trim()), v) : v))),
  ].join('\n') + '\n';
}

/** A result as people read it: a table for lists, `field: value` lines (and a table per list) for an object. */
export function human(io: Pick<Io, 'color'>, value: unknown): string {
  if (Array.isArray(value)) {
    if (value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) return table(io, value as Record<string, unknown>[]);
    return value.map(show).join('\n') + '\n';
  }
  if (!value || typeof value !== 'object') return `${show(value)}\n`;
  const entries = Object.entries(value as Record<string, unknown>);
  const width = Math.max(0, ...entries.filter(([, v]) => scalar(v)).map(([k]) => k.length));
  let text = '';
  for (const [k, v] of entries) {
    if (scalar(v)) text += `${paint(io, 'bold', `${k}:`.padEnd(width + 1))} ${/status$/i.test(k) ? paint(io, statusStyle(show(v)), show(v)) : show(v)}\n`;
  }
  for (const [k, v] of entries) {
    if (scalar(v) || v === undefined) continue;
    if (Array.isArray(v) && v.every((x) => x && typeof x === 'object')) text += `\n${paint(io, 'bold', `${k}:`)}\n${table(io, v as Record<string, unknown>[])}`;
    else text += `${paint(io, 'bold', `${k}:`.padEnd(width + 1))} ${JSON.stringify(v)}\n`;
  }
  return text || '{}\n';
}
