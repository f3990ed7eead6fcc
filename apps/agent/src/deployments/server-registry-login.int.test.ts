// The server registry's login on the agent's disk: private to the agent's user, and never
// quoted by an error (an error of the registry's start goes into the deployment log).
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLogin } from './server-registry.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-registry-login-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

const file = () => join(dataDir, 'server-registry.json');

describe('the server registry login', () => {
  it('is made 0600 once and kept; a file made readable by others is 0600 again', async () => {
    const login = await loadLogin(dataDir);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    expect(login.htpasswd.startsWith(`${login.username}:$2`)).toBe(true);
    expect(await loadLogin(dataDir)).toEqual(login);
    await chmod(file(), 0o644);
    expect(await loadLogin(dataDir)).toEqual(login);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
  });

  it('a damaged file is an error that quotes none of it', async () => {
    const password = 'registry-password-never-quoted';
    await writeFile(file(), `{"username":"skiff","password":"${password}",`, { mode: 0o600 });
    const err = await loadLogin(dataDir).then(() => null, (e: unknown) => e as Error);
    expect(err?.message).toMatch(/not valid JSON/);
    expect(err?.message).not.toContain(password);
    expect(await readFile(file(), 'utf8')).toContain(password);
  });
});
