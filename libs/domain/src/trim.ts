/**
 * `text` without the runs of `char` at its ends. A search like `/-+$/` retries the run from
 * each of its characters (quadratic: tools/redos.spec.ts refuses it); this is one pass.
 */
export function trimChar(text: string, char: string, side: 'start' | 'end' | 'both' = 'both'): string {
  let start = 0;
  let end = text.length;
  if (side !== 'end') while (start < end && text[start] === char) start++;
  if (side !== 'start') while (end > start && text[end - 1] === char) end--;
  return text.slice(start, end);
}
