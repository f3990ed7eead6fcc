/**
 * How deep an input may nest. Parsing a recursive field (JSON metadata) of a value nested
 * thousands deep overflows the stack, so such an input is refused first, naming the field
 * where it goes too deep. Walked without recursion.
 */
import type { Issue } from '../errors.js';

export const MAX_INPUT_DEPTH = 64;

export function tooDeepIssues(value: unknown, max = MAX_INPUT_DEPTH): Issue[] {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= max) return [{ path: path.slice(0, 1), message: `nested more than ${max} levels deep` }];
    for (const [k, child] of Array.isArray(v) ? v.entries() : Object.entries(v)) stack.push({ value: child, path: [...path, k] });
  }
  return [];
}
