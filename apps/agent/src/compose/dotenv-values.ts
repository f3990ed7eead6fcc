/**
 * The variables of a stack's `.env` text, read back as libs/domain formatComposeDotenv wrote
 * them (`NAME=value` unquoted; `'…'` with `\'` for a quote; `"…"` with `\\`, `\"`, `\n`, `\r`),
 * for `docker stack deploy`, which does not read `.env` and takes them as its environment.
 * Lines of another form (comments, blank lines) are skipped.
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readComposeDotenv(text: string): Map<string, string> {
  const variables = new Map<string, string>();
  let at = 0;
  while (at < text.length) {
    const eq = text.indexOf('=', at);
    const newline = text.indexOf('\n', at);
    if (eq < 0 || (newline >= 0 && newline < eq)) {
      at = newline < 0 ? text.length : newline + 1;
      continue;
    }
    const name = text.slice(at, eq).trim();
    const quote = text[eq + 1];
    let value: string;
    if (quote === "'" || quote === '"') {
      const read = quoted(text, eq + 2, quote);
      value = read.value;
      at = read.end;
      const lineEnd = text.indexOf('\n', at);
      at = lineEnd < 0 ? text.length : lineEnd + 1;
    } else {
      const end = newline < 0 ? text.length : newline;
      value = text.slice(eq + 1, end).replace(/\r$/, '');
      at = end + 1;
    }
    if (NAME.test(name)) variables.set(name, value);
  }
  return variables;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', '\\': '\\', '"': '"' };

function quoted(text: string, start: number, quote: string): { value: string; end: number } {
  let value = '';
  let at = start;
  while (at < text.length && text[at] !== quote) {
    const c = text[at]!;
    if (c === '\\' && quote === "'" && text[at + 1] === "'") {
      value += "'";
      at += 2;
    } else if (c === '\\' && quote === '"' && text[at + 1] !== undefined && ESCAPES[text[at + 1]!] !== undefined) {
      value += ESCAPES[text[at + 1]!];
      at += 2;
    } else {
      value += c;
      at += 1;
    }
  }
  return { value, end: at + 1 };
}
