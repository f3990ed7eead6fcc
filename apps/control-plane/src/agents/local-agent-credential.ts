import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCAL_AGENT_CREDENTIAL_FILE = 'local-agent.credential';

/**
 * The credential of the platform host's own agent: `<dataDir>/local-agent.credential`,
 * created (mode 0600) on first boot. The local agent reads the same file.
 */
export function loadLocalAgentCredential(dataDir: string): string {
  const file = join(dataDir, LOCAL_AGENT_CREDENTIAL_FILE);
  if (!existsSync(file)) {
    try {
      writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process created it first: read theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const credential = readFileSync(file, 'utf8').trim();
  if (credential.length < 16) throw new Error(`${file} holds no usable credential`);
  return credential;
}
