import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandSigner } from '@skiff/domain';
import { afterEach, describe, expect, it } from 'vitest';
import { PINNED_COMMAND_KEY_FILE, pinCommandKey } from './command-key.js';

const dirs: string[] = [];
const aDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-key-'));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const first = CommandSigner.generate();
const second = CommandSigner.generate();
const config = (dataDir: string, commandKey?: string) => ({ dataDir, serverId: 's1', ...(commandKey ? { commandKey } : {}) });

describe('the pinned command key', () => {
  it('is pinned at the first start (0600) and used afterwards, with or without SKIFF_COMMAND_KEY', async () => {
    const dir = await aDir();
    const pinned = await pinCommandKey(config(dir, first.publicKey), true);
    expect(pinned).toMatchObject({ how: 'pinned', verifier: { keyId: first.keyId } });
    expect((await stat(join(dir, PINNED_COMMAND_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dir, PINNED_COMMAND_KEY_FILE), 'utf8'))).toEqual({ serverId: 's1', publicKey: first.publicKey });
    expect(await pinCommandKey(config(dir), false)).toMatchObject({ how: 'kept', verifier: { keyId: first.keyId } });
    expect(await pinCommandKey(config(dir, first.publicKey), false)).toMatchObject({ how: 'kept', verifier: { keyId: first.keyId } });
  });

  it('refuses another key without a new join, and takes it with one', async () => {
    const dir = await aDir();
    await pinCommandKey(config(dir, first.publicKey), true);
    await expect(pinCommandKey(config(dir, second.publicKey), false)).rejects.toThrow(/SKIFF_COMMAND_KEY differs from the control plane key pinned in .*command-key\.json: the pinned key changes only with a new join/);
    expect(await pinCommandKey(config(dir), false)).toMatchObject({ verifier: { keyId: first.keyId } });
    expect(await pinCommandKey(config(dir, second.publicKey), true)).toMatchObject({ how: 'replaced', verifier: { keyId: second.keyId } });
    expect(await pinCommandKey(config(dir), false)).toMatchObject({ verifier: { keyId: second.keyId } });
  });

  it('pins SKIFF_COMMAND_KEY for an agent with an explicit credential, and refuses to start without any key', async () => {
    const dir = await aDir();
    await expect(pinCommandKey(config(dir), false)).rejects.toThrow(/no command key: set SKIFF_COMMAND_KEY.*refuses to run unsigned commands/);
    await expect(pinCommandKey(config(dir), true)).rejects.toThrow(/the join brought no command key/);
    expect(await pinCommandKey(config(dir, first.publicKey), false)).toMatchObject({ how: 'pinned', verifier: { keyId: first.keyId } });
  });

  it("refuses a file of another server, a broken one, or one others may write", async () => {
    const dir = await aDir();
    const file = join(dir, PINNED_COMMAND_KEY_FILE);
    await pinCommandKey(config(dir, first.publicKey), false);
    await expect(pinCommandKey({ dataDir: dir, serverId: 's2' }, false)).rejects.toThrow(/pinned for server s1, not s2/);
    await chmod(file, 0o666);
    await expect(pinCommandKey(config(dir), false)).rejects.toThrow(/writable by others/);
    await writeFile(file, '{"serverId":"s1","publicKey":"AAAA"}', { mode: 0o600 });
    await chmod(file, 0o600);
    await expect(pinCommandKey(config(dir), false)).rejects.toThrow(/holds no usable key/);
    await writeFile(file, 'nope');
    await expect(pinCommandKey(config(dir), false)).rejects.toThrow(/is not a pinned command key/);
  });
});
