/**
 * The proxy's last good config on disk (`<agent data>/proxy/last-good.json`): the config the
 * `skiff-proxy` container boots with. It may hold private keys of custom certificates, so it
 * is 0600 and replaced atomically (a crash leaves the old file or the new one, never half).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

export type CaddyConfig = Record<string, unknown>;

export function writeConfigFile(path: string, config: CaddyConfig): void {
  writeFileAtomic(path, `${JSON.stringify(config)}\n`);
}

/** Replaces the file with `text` (0600): a temporary file beside it, fsynced, renamed over it. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** The config in the file; null when there is none or it is not a JSON object. */
export function readConfigFile(path: string): CaddyConfig | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as CaddyConfig) : null;
  } catch {
    return null;
  }
}
