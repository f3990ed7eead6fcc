import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialError, STORED_NATS_CREDENTIALS_FILE, readStoredNatsCredentials, storeNatsCredentials } from './credential.js';

const dirs: string[] = [];
const aDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-cred-'));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const nats = { creds: '-----BEGIN NATS USER JWT-----\nx\n------END NATS USER JWT------\n', inboxPrefix: '_INBOX_s1' };

describe('stored NATS credentials', () => {
  it('are kept private, read back, replaced, and removed when a registration hands out none', async () => {
    const dir = await aDir();
    const file = join(dir, STORED_NATS_CREDENTIALS_FILE);
    expect(await readStoredNatsCredentials(dir, 's1')).toBeNull();
    await storeNatsCredentials(dir, 's1', nats);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readStoredNatsCredentials(dir, 's1')).toEqual(nats);
    await storeNatsCredentials(dir, 's1', { ...nats, creds: 'newer' });
    expect(await readStoredNatsCredentials(dir, 's1')).toEqual({ ...nats, creds: 'newer' });
    await storeNatsCredentials(dir, 's1', null);
    await expect(stat(file)).rejects.toThrow();
    await storeNatsCredentials(dir, 's1', null);
  });

  it("are not used when they are another server's or unreadable, and refused when others can read them", async () => {
    const dir = await aDir();
    const file = join(dir, STORED_NATS_CREDENTIALS_FILE);
    await storeNatsCredentials(dir, 's1', nats);
    expect(await readStoredNatsCredentials(dir, 's2')).toBeNull();
    await writeFile(file, '{not json', { mode: 0o600 });
    expect(await readStoredNatsCredentials(dir, 's1')).toBeNull();
    await storeNatsCredentials(dir, 's1', nats);
    await chmod(file, 0o644);
    const refused = readStoredNatsCredentials(dir, 's1');
    await expect(refused).rejects.toBeInstanceOf(CredentialError);
    await expect(refused).rejects.not.toThrow(nats.creds);
    expect(await readFile(file, 'utf8')).toContain('_INBOX_s1');
  });
});
