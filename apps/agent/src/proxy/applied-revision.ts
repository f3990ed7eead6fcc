/**
 * The revision of the last ApplyProxyConfig Caddy accepted (`<agent data>/proxy/
 * applied-revision.json`, next to last-good.json), so an older command arriving late (or run
 * again after a restart) does not replace a newer config. Replaced atomically.
 */
import { dirname, join } from 'node:path';
import { readConfigFile, writeConfigFile } from './last-good.js';

export const APPLIED_REVISION_FILE = 'applied-revision.json';

/** The file beside the proxy's last good config. */
export function appliedRevisionPath(lastGoodPath: string): string {
  return join(dirname(lastGoodPath), APPLIED_REVISION_FILE);
}

/** The last applied revision; null when none was recorded (or the file is unreadable). */
export function readAppliedRevision(path: string): bigint | null {
  const revision = readConfigFile(path)?.revision;
  return typeof revision === 'string' && /^\d+$/.test(revision) ? BigInt(revision) : null;
}

export function writeAppliedRevision(path: string, revision: bigint): void {
  writeConfigFile(path, { revision: revision.toString() });
}
