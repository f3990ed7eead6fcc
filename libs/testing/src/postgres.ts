import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestService } from './nats.js';
import { waitFor } from './wait-for.js';

const PORT = Number(process.env.SKIFF_TEST_PG_PORT ?? 15432);
const ROOT = process.env.SKIFF_TEST_PG_DIR ?? '/tmp/skiff-test-pg';

function pgBin(name: string): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort().reverse() : [];
  for (const v of versions) {
    const p = join(base, v, 'bin', name);
    if (existsSync(p)) return p;
  }
  throw new Error(`PostgreSQL's ${name} not found under ${base}: install the postgresql package (tools/test does)`);
}

/** Runs a PostgreSQL program as the `postgres` user when we are root (initdb refuses root). */
function runAsPostgres(program: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${program} failed: ${r.stderr || r.stdout}`);
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Whether the process `pid` runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A throw-away PostgreSQL cluster on loopback for the tests (trust auth, fsync off), stopped
 * by the global teardown of the run that started it. The cluster's directory names the
 * process of that run (`owner`): one answering on the port is used as it is while its owner
 * runs (another run's: concurrent runs should each set their own SKIFF_TEST_PG_PORT and
 * SKIFF_TEST_PG_DIR), and adopted, to be stopped at the end, when its owner is gone (a run
 * killed before its teardown). `SKIFF_TEST_DATABASE_URL` points the tests at another one.
 */
export async function ensureTestPostgres(): Promise<TestService> {
  if (process.env.SKIFF_TEST_DATABASE_URL) return { url: process.env.SKIFF_TEST_DATABASE_URL };
  const url = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
  const data = join(ROOT, 'data');
  const ownerFile = join(ROOT, 'owner');
  const stop = async () => {
    runAsPostgres(pgBin('pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    rmSync(ROOT, { recursive: true, force: true });
  };
  if (await answers(url)) {
    const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : NaN;
    if (!existsSync(join(data, 'postmaster.pid')) || (Number.isInteger(owner) && alive(owner))) return { url };
    writeFileSync(ownerFile, String(process.pid));
    return { url, stop };
  }
  // Not answering: whatever is there is left over from an earlier run; start clean.
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', ROOT]);
  writeFileSync(ownerFile, String(process.pid));
  runAsPostgres(pgBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  runAsPostgres(pgBin('pg_ctl'), [
    '-D', data, '-l', join(ROOT, 'log'), '-w', 'start',
    '-o', `-p ${PORT} -k ${ROOT} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`,
  ]);
  await waitFor(() => answers(url), { timeoutMs: 30_000, what: 'test PostgreSQL to answer' });
  return { url, stop };
}

/**
 * A new database on the test cluster, empty or a copy of `template` (a database of the
 * cluster no one is connected to); returns its URL and a way to drop it.
 */
export async function freshDatabase(adminUrl: string, template?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (template !== undefined && !/^[a-z_][a-z0-9_]*$/.test(template)) throw new Error(`not a database name: ${template}`);
  const name = `skiff_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      try {
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end().catch(() => {});
      }
    },
  };
}
