import type { Issue } from '../errors.js';

const MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Where parsed input holds U+0000, in a string or an object key: PostgreSQL text cannot store
 * it, and no field of the API has a use for it.
 */
export function nulIssues(value: unknown, path: (string | number)[] = [], out: Issue[] = []): Issue[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ path, message: MESSAGE });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => nulIssues(item, [...path, i], out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) out.push({ path: [...path, key], message: MESSAGE });
      else nulIssues(item, [...path, key], out);
    }
  }
  return out;
}
