/**
 * A dotenv parser with no shell in it: what is written is what the variable holds.
 *
 * - One `KEY=VALUE` per line; spaces around `=` are allowed; an optional `export ` prefix.
 * - Names are POSIX-portable: letters, digits and `_`, not starting with a digit.
 * - Blank lines and lines starting with `#` are skipped.
 * - Unquoted values are trimmed; ` #` (a `#` after whitespace) starts a comment, so
 *   `URL=http://x/#top` and `PASS=a#b` keep their `#`.
 * - `'single'` quotes keep everything literally. `"double"` quotes understand `\n`, `\r`,
 *   `\t`, `\"` and `\\`; any other backslash is kept as written. Quoted values may span
 *   lines (PEM keys); after the closing quote only whitespace or a comment may follow.
 * - No expansion of any kind: `$HOME`, `${X}`, backticks stay as written. (Skiff's own
 *   `${{…}}` references are substituted later, by `resolveServiceEnv`.)
 * - A name given twice keeps the last value.
 *
 * Bad lines do not stop the parse: each one is reported with its 1-based line number.
 * Messages never quote a value (values are often secrets); they may quote a name.
 */

export interface DotenvIssue {
  /** 1-based line number where the bad entry starts. */
  line: number;
  message: string;
}

export interface ParsedDotenv {
  /** The variables in the order first seen. */
  variables: Map<string, string>;
  issues: DotenvIssue[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isEnvName(name: string): boolean {
  return NAME.test(name);
}

export function parseDotenv(text: string): ParsedDotenv {
  const lines = text.split(/\r?\n/);
  const variables = new Map<string, string>();
  const issues: DotenvIssue[] = [];
  let index = 0;
  while (index < lines.length) {
    const step = parseEntry(lines, index);
    if (step.kind === 'entry') variables.set(step.name, step.value);
    if (step.kind === 'issue') issues.push({ line: index + 1, message: step.message });
    index = step.next;
  }
  return { variables, issues };
}

type Step =
  | { kind: 'skip'; next: number }
  | { kind: 'entry'; name: string; value: string; next: number }
  | { kind: 'issue'; message: string; next: number };

function parseEntry(lines: string[], index: number): Step {
  const line = lines[index].trimStart();
  if (line === '' || line.startsWith('#')) return { kind: 'skip', next: index + 1 };
  const body = line.replace(/^export\s+/, '');
  const eq = body.indexOf('=');
  if (eq < 0) return { kind: 'issue', message: 'expected KEY=VALUE', next: index + 1 };
  const value = parseValue(body.slice(eq + 1), lines, index);
  if ('message' in value) return { kind: 'issue', message: value.message, next: value.next };
  const name = body.slice(0, eq).trim();
  const problem = nameProblem(name);
  if (problem) return { kind: 'issue', message: problem, next: value.next };
  return { kind: 'entry', name, value: value.value, next: value.next };
}

function nameProblem(name: string): string | null {
  if (name === '') return 'missing variable name before "="';
  if (!NAME.test(name)) {
    return `"${name}" is not a valid variable name (letters, digits and _, not starting with a digit)`;
  }
  return null;
}

type ValueResult = { value: string; next: number } | { message: string; next: number };

function parseValue(raw: string, lines: string[], index: number): ValueResult {
  const rest = raw.trimStart();
  const quote = rest[0];
  if (quote !== '"' && quote !== "'") return { value: unquoted(raw), next: index + 1 };
  const read = readQuoted(quote, rest.slice(1), lines, index);
  if (read === null) {
    const kind = quote === '"' ? 'double' : 'single';
    return { message: `unterminated ${kind}-quoted value`, next: index + 1 };
  }
  const after = read.after.trim();
  if (after !== '' && !after.startsWith('#')) {
    return { message: 'unexpected text after the closing quote', next: read.next };
  }
  const value = quote === '"' ? unescapeDouble(read.inner) : read.inner;
  return { value, next: read.next };
}

/** An unquoted value: up to a ` #` comment, trimmed. */
function unquoted(raw: string): string {
  const comment = raw.search(/\s#/);
  return (comment < 0 ? raw : raw.slice(0, comment)).trim();
}

/**
 * The text between an opening quote (already consumed: `first` follows it) and its closing
 * quote, which may be on a later line. Each line is scanned once. Null when never closed.
 */
function readQuoted(
  quote: '"' | "'",
  first: string,
  lines: string[],
  index: number,
): { inner: string; after: string; next: number } | null {
  const parts: string[] = [];
  for (let n = index; n < lines.length; n += 1) {
    const chunk = n === index ? first : lines[n];
    const close = closingQuote(chunk, quote);
    if (close >= 0) {
      parts.push(chunk.slice(0, close));
      return { inner: parts.join('\n'), after: chunk.slice(close + 1), next: n + 1 };
    }
    parts.push(chunk);
  }
  return null;
}

function closingQuote(chunk: string, quote: '"' | "'"): number {
  if (quote === "'") return chunk.indexOf("'");
  for (let i = 0; i < chunk.length; i += 1) {
    if (chunk[i] === '\\') i += 1;
    else if (chunk[i] === '"') return i;
  }
  return -1;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

function unescapeDouble(inner: string): string {
  return inner.replace(/\\([\s\S])/g, (whole, c: string) => ESCAPES[c] ?? whole);
}
