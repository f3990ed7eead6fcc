import type { Issue } from '../errors.js';

const NUL = 'must not contain the NUL character (U+0000)';
const SURROGATE = 'must be valid Unicode: a lone UTF-16 surrogate has no UTF-8 form';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as it is, or null. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return NUL;
  return LONE_SURROGATE.test(text) ? SURROGATE : null;
}

/**
 * Where parsed input holds text PostgreSQL cannot store (in a string or an object key): U+0000,
 * which text columns refuse, and lone surrogates, which JSON columns refuse and text columns
 * would turn into U+FFFD. No field of the API has a use for either.
 */
export function unstorableTextIssues(value: unknown, path: (string | number)[] = [], out: Issue[] = []): Issue[] {
  if (typeof value === 'string') {
    const why = unstorable(value);
    if (why) out.push({ path, message: why });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unstorableTextIssues(item, [...path, i], out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const why = unstorable(key);
      if (why) out.push({ path: [...path, key], message: why });
      else unstorableTextIssues(item, [...path, key], out);
    }
  }
  return out;
}
