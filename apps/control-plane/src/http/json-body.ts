import { DomainError } from '../errors.js';

/**
 * The JSON object of an operation's body, or BAD_REQUEST saying what is wrong with it. The body
 * is read as JSON whatever its declared type (`curl -d` declares a form): no credential rides
 * along unasked (keys come only in headers, never cookies), so a type proves nothing here.
 * Its bytes must be UTF-8 (never silently replaced by U+FFFD), and an object may not give a
 * key twice (JSON.parse keeps the last one, another reader of the same body the first).
 * An empty body is the empty input, whatever its type. A compressed body is refused (never inflated).
 */
export function jsonObjectOf(bytes: Buffer, contentEncoding?: string): Record<string, unknown> {
  if (contentEncoding && !/^\s*identity\s*$/i.test(contentEncoding)) {
    throw refused(`The request body must be sent uncompressed (content-encoding "${contentEncoding.slice(0, 100)}" is not taken)`, 'content-encoding must be identity');
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw refused('The request body is not valid UTF-8', 'not valid UTF-8');
  }
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw refused('The request body is not valid JSON', 'not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refused('The request body must be a JSON object', 'expected a JSON object');
  }
  const duplicate = duplicateKeyPath(text);
  if (duplicate) {
    const field = duplicate.join('.');
    throw new DomainError('BAD_REQUEST', `Invalid input data: ${field}: given more than once`, [{ path: duplicate, message: 'given more than once' }]);
  }
  return body as Record<string, unknown>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

const refused = (message: string, issue: string) => new DomainError('BAD_REQUEST', message, [{ path: [], message: issue }]);

/**
 * The path of the first key an object of `text` (valid JSON) gives twice, keys compared
 * decoded (`"a"` and `"\u0061"` are one key); null when there is none. Walked without
 * recursion, so any depth JSON.parse took is fine. Strings are skipped by searching for their
 * closing quote, and only a key with an escape in it is decoded (the others are their text).
 */
export function duplicateKeyPath(text: string): Array<string | number> | null {
  // One frame per open object (its keys, the key being read) or array (the index being read).
  const stack: Array<{ keys: Set<string> | null; at: string | number }> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case 0x22: {
        // "
        const end = closingQuote(text, i);
        const top = stack[stack.length - 1];
        if (expectKey && top?.keys) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          if (top.keys.has(key)) return [...stack.slice(0, -1).map((f) => f.at), key];
          top.keys.add(key);
          top.at = key;
          expectKey = false;
        }
        i = end;
        break;
      }
      case 0x7b: // {
        stack.push({ keys: new Set(), at: '' });
        expectKey = true;
        break;
      case 0x5b: // [
        stack.push({ keys: null, at: 0 });
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        expectKey = false;
        break;
      case 0x2c: {
        // ,
        const top = stack[stack.length - 1]!;
        if (top.keys) expectKey = true;
        else top.at = (top.at as number) + 1;
      }
    }
  }
  return null;
}

/** Where the string opened at `start` closes: the next quote not escaped by an odd run of backslashes. */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

const BACKSLASH = 0x5c;
