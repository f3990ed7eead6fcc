import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { migrateToLatest, openDatabase } from '@skiff/db';
import { freshDatabase } from '@skiff/testing';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ageDecrypt } from '../../testing/age-decrypt.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from '../../testing/s3-server.js';

const BUCKET = 'skiff-platform-backups';
const repoRoot = join(import.meta.dirname, '..', '..', '..', '..', '..');
const secretKey = randomBytes(32);
let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
let dataDir: string;

/** A data directory as a running control plane has one, with what the archive must leave out. */
async function fillDataDir(dir: string) {
  await writeFile(join(dir, 'known_hosts'), 'git.example.test ssh-ed25519 AAAA\n');
  await mkdir(join(dir, 'tls'));
  await writeFile(join(dir, 'tls', 'ca.key'), 'the channel CA key', { mode: 0o600 });
  await writeFile(join(dir, 'secret.key'), secretKey, { mode: 0o600 });
  await writeFile(join(dir, 'initial-api-key'), 'sk_the_owners_first_key\n', { mode: 0o600 });
  await writeFile(join(dir, 'up.lock'), '');
  await mkdir(join(dir, 'db'));
  await writeFile(join(dir, 'db', 'PG_VERSION'), '17\n');
  await mkdir(join(dir, 'archives', '.incoming'), { recursive: true });
  await writeFile(join(dir, 'archives', '.incoming', 'upload'), 'still arriving');
  await writeFile(join(dir, 'archives', 'app.tar'), 'an uploaded archive');
  await writeFile(join(dir, 'settings.json.tmp'), 'half written');
  await mkdir(join(dir, 'logs'));
  await writeFile(join(dir, 'logs', 'nats.log'), 'a log line');
  await mkdir(join(dir, 'nats', 'jetstream'), { recursive: true });
  await mkdir(join(dir, 'nats', 'auth'));
  await writeFile(join(dir, 'nats', 'jetstream', 'msgs.blk'), 'stream data');
  await writeFile(join(dir, 'nats', 'nats-server.pid'), '4242');
  await writeFile(join(dir, 'nats', 'auth', 'account.nk'), 'the account seed', { mode: 0o600 });
  await symlink('/etc', join(dir, 'etc-link'));
  await symlink('/etc/hostname', join(dir, 'hostname-link'));
}

async function tarEntries(archive: Buffer): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        entries.set(`${header.type}:${header.name}`, Buffer.concat(chunks).toString('utf8'));
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(archive);
  await done;
  return entries;
}

/** `npx tsx tools/platform-restore.ts <args>` with `stdin`: its exit code and its output (stdout and stderr). */
function platformRestore(args: string[], stdin: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'tools', 'platform-restore.ts'), ...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-platform-data-'));
  await fillDataDir(dataDir);
  s3 = await startS3([BUCKET]);
  t = await startTestPlatform({ database: 'pglite', dataDir, secretKey });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await s3?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the platform backup on the embedded database (PGlite)', () => {
  it('dumps the database and archives the data directory, encrypted, and both restore', async () => {
    const passphrase = 'embedded platform backup passphrase';
    t.watch.secret(passphrase);
    const project = await t.call('project.create', { name: 'made-before-the-backup' });
    expect(project.status, JSON.stringify(project.body)).toBe(200);
    const d = await t.call('destination.create', {
      name: 'local',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: BUCKET,
      accessKey: S3_ACCESS_KEY,
      secretKey: S3_SECRET_KEY,
      encryptionPassphrase: passphrase,
    });
    const b = await t.call('backup.create', {
      schedule: '0 3 * * *',
      prefix: 'platform/',
      destinationId: d.body.destinationId,
      database: 'skiff',
      databaseType: 'web-server',
      keepLatestCount: null,
      includeEncryptionKey: true,
    });
    expect(b.status, JSON.stringify(b.body)).toBe(200);

    const run = await t.call('backup.manualBackupWebServer', { backupId: b.body.backupId });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const files: string[] = run.body.files;
    expect(files.map((f) => f.slice(f.lastIndexOf('/') + 1).replace(/^[^.]+\./, ''))).toEqual(['sql.gz.age', 'data.tar.gz.age', 'secret.key.gz.age']);
    const opened = await Promise.all(files.map(async (f) => ageDecrypt(await s3.get(BUCKET, f), passphrase)));
    for (const o of opened) expect(o.ok, o.err).toBe(true);
    const [dump, data, key] = opened.map((o) => gunzipSync(o.out));

    // The dump restores into the embedded database of a new data directory, with tools/platform-restore.ts on the
    // file as fetched (encrypted, gzipped: both undone as it streams), the passphrase on its stdin…
    const newDataDir = await mkdtemp(join(tmpdir(), 'skiff-platform-new-'));
    try {
      const fetched = join(newDataDir, files[0]!.slice(files[0]!.lastIndexOf('/') + 1));
      await writeFile(fetched, await s3.get(BUCKET, files[0]!));
      const wrong = await platformRestore([fetched, newDataDir], 'not the passphrase\n');
      expect(wrong.code).toBe(1);
      expect(wrong.output).toMatch(/could not be decrypted \(wrong passphrase/);
      expect(existsSync(join(newDataDir, 'db'))).toBe(false);
      const restore = await platformRestore([fetched, newDataDir], `${passphrase}\n`);
      expect(restore.code, restore.output).toBe(0);
      expect(restore.output).toContain(`restored ${fetched} into ${join(newDataDir, 'db')}`);
      const again = await platformRestore([fetched, newDataDir], `${passphrase}\n`);
      expect(again.code).toBe(1);
      expect(again.output).toMatch(/holds a database already/);
      const restored = await openDatabase({ pgliteDir: join(newDataDir, 'db') });
      try {
        await migrateToLatest(restored.db);
        const rows = await restored.db.selectFrom('projects').select('name').execute();
        expect(rows.map((r) => r.name)).toContain('made-before-the-backup');
      } finally {
        await restored.close();
      }
    } finally {
      await rm(newDataDir, { recursive: true, force: true });
    }
    // …and with psql into a PostgreSQL server, as the README says.
    const pgDb = await freshDatabase(inject('postgresUrl'));
    const work = await mkdtemp(join(tmpdir(), 'skiff-platform-restore-'));
    try {
      await writeFile(join(work, 'dump.sql'), dump!);
      // PGlite's pg_dump is version 17: a server before 17 refuses its one `SET transaction_timeout`, and nothing else.
      const { stderr } = await promisify(execFile)('psql', ['--quiet', `--file=${join(work, 'dump.sql')}`, pgDb.url]);
      expect(stderr.split('\n').filter((l) => l.includes('ERROR') && !l.includes('"transaction_timeout"'))).toEqual([]);
      const { stdout } = await promisify(execFile)('psql', ['--tuples-only', '--no-align', '--command=select name from projects', pgDb.url]);
      expect(stdout.split('\n')).toContain('made-before-the-backup');
    } finally {
      await rm(work, { recursive: true, force: true });
      await pgDb.drop();
    }

    // The data directory, without the database's folder, the keys (encryption, first API key), transient files or links.
    const entries = await tarEntries(data!);
    expect([...entries.keys()].sort()).toEqual([
      'directory:archives',
      'directory:nats',
      'directory:nats/auth',
      'directory:tls',
      'file:archives/app.tar',
      'file:known_hosts',
      'file:nats/auth/account.nk',
      'file:tls/ca.key',
    ]);
    expect(entries.get('file:known_hosts')).toBe('git.example.test ssh-ed25519 AAAA\n');
    expect(key!.equals(secretKey)).toBe(true);
  }, 120_000);
});
