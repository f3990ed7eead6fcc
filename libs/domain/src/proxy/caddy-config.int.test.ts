/**
 * Every golden Caddy config must be one the real Caddy accepts: `caddy validate` loads and
 * provisions it (modules, handlers, certificates, issuers) without starting listeners.
 * Caddy's state (local CA, autosave) goes to a temporary HOME / XDG_* directory.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'caddy-config');
const run = promisify(execFile);
const CADDY = process.env.CADDY_BIN ?? '/usr/bin/caddy';
const home = mkdtempSync(join(tmpdir(), 'skiff-caddy-validate-'));
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_DATA_HOME: join(home, 'data'),
  XDG_CACHE_HOME: join(home, 'cache'),
};

afterAll(() => rmSync(home, { recursive: true, force: true }));

async function validate(file: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(CADDY, ['validate', '--config', file], { env, timeout: 20_000 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
  }
}

const goldens = readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.json')).sort();

describe('caddy validate accepts every golden config', () => {
  it('finds the caddy binary and the golden files', () => {
    expect(existsSync(CADDY)).toBe(true);
    expect(goldens.length).toBeGreaterThanOrEqual(10);
  });

  it.each(goldens)('%s', async (name) => {
    const result = await validate(join(GOLDEN_DIR, name));
    expect(result.output).toContain('Valid configuration');
    expect(result.ok).toBe(true);
  });

  it('and refuses a config Caddy cannot load (so the check has teeth)', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = join(home, 'broken.json');
    writeFileSync(file, JSON.stringify({ apps: { http: { servers: { s: { listen: [':80'], routes: [{ handle: [{ handler: 'no_such_handler' }] }] } } } } }));
    const result = await validate(file);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/no_such_handler/);
  });
});
