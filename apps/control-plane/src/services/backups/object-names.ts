/**
 * Where a backup's files live in its bucket, and which of them retention removes. A run
 * writes `<prefix><name>/<stamp>.<ext>` (and siblings with the same stamp, such as the
 * platform backup's key); retention only ever looks at keys of exactly that shape.
 */

/** A run's time as a key part that sorts as time does: 2026-12-05T17-01-00-000Z. */
export const stampOf = (at: Date) => at.toISOString().replace(/[:.]/g, '-');

const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/** The folder of one backup's files: its normalised prefix (empty or ending in `/`), then its name. */
export const ownPrefix = (prefix: string, name: string) => `${prefix}${name}/`;

/** S3's longest object key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/** Whether `key` is a file directly in the folder `own` (not the folder itself, nor deeper), that a bucket can hold. */
export const isFileIn = (key: string, own: string) =>
  key.startsWith(own) &&
  key.length > own.length &&
  !key.slice(own.length).includes('/') &&
  !/[\x00-\x1f\x7f]/.test(key) &&
  Buffer.byteLength(key) <= MAX_KEY_BYTES;

export const objectKey = (prefix: string, name: string, at: Date, ext: string) => `${ownPrefix(prefix, name)}${stampOf(at)}.${ext}`;

/** The run stamp of a key directly in `own` written by a run, or null for anything else. */
export function runStampOf(key: string, own: string): string | null {
  if (!key.startsWith(own)) return null;
  const rest = key.slice(own.length);
  if (rest.includes('/')) return null;
  const stamp = rest.split('.', 1)[0]!;
  return STAMP.test(stamp) && rest.length > stamp.length + 1 ? stamp : null;
}

/** The keys retention removes: the files of runs older than the newest `keep`; other keys are never named. */
export function retentionVictims(keys: string[], own: string, keep: number): string[] {
  const stamps = [...new Set(keys.map((k) => runStampOf(k, own)).filter((s): s is string => s !== null))].sort().reverse();
  const kept = new Set(stamps.slice(0, keep));
  return keys.filter((k) => {
    const stamp = runStampOf(k, own);
    return stamp !== null && !kept.has(stamp);
  });
}
