import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSecretKey } from './crypto/secret-box.js';

/** The encryption key: `SKIFF_SECRET_KEY`, else `<dataDir>/secret.key`, created (0600) on first boot. */
export function loadSecretKey(dataDir: string, fromEnv?: string): Buffer {
  if (fromEnv) return parseSecretKey(fromEnv);
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return parseSecretKey(readFileSync(file, 'utf8'));
  const key = randomBytes(32);
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}
