/**
 * The folder a backup writes to inside its destination bucket, as stored: trimmed, no
 * leading slash, repeated slashes collapsed, exactly one trailing slash; empty stays empty
 * (files go to `<appName>/` directly). Returns null when a segment is `.` or `..`, which
 * would escape or alias the backup's folder.
 */
export function normalizeBackupPrefix(prefix: string): string | null {
  const segments = prefix.trim().split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '.' || s === '..')) return null;
  return segments.length === 0 ? '' : `${segments.join('/')}/`;
}
