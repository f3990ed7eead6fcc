/**
 * The agent's memory during a large backup (issue 18), run by `tools/bench backup`: NATS, the
 * bundled control plane and the bundled agent as tools/up runs them (CONTROL_PLANE_CMD,
 * AGENT_CMD), the tests' S3 server (s3rver, in this process), then
 *   1. a PostgreSQL service (dbA, image postgres:17) filled with BENCH_BACKUP_MB of random
 *      bytea rows (they compress barely) and backed up with `backup.manualBackupDbA` (skipped
 *      with BENCH_BACKUP_POSTGRES=0);
 *   2. a named volume holding BENCH_BACKUP_MB of 1 MiB files of random bytes, backed up with
 *      `volumeBackup.manualBackup` (skipped with BENCH_BACKUP_VOLUME=0);
 *   3. a libSQL service (dbE, its external port open) filled with about BENCH_BACKUP_MB of
 *      randomblob rows (`pragma page_count`), backed up with `backup.manualBackupDbE`, its table
 *      dropped, then restored with `backup.restore` (force) and its rows counted (skipped with
 *      BENCH_BACKUP_LIBSQL=0).
 * For each (backup and restore): the agent's VmRSS sampled every 100 ms during the run, beside its idle figure just
 * before (after a first small backup has loaded the S3 client's code) and a bare `node` started
 * with the agent's binary and flags (the floor), and the agent's RSS before any backup. Target: the peak under 100 MB.
 * Everything it creates (Swarm services, volumes, containers, directories) is removed at the
 * end, also after a failure or Ctrl-C.
 * First, the control plane's side: the embedded database's platform dump (bench-platform-dump.ts).
 *   BENCH_BACKUP_MB (1024), BENCH_BACKUP_POSTGRES (1), BENCH_BACKUP_VOLUME (1), BENCH_BACKUP_LIBSQL (1), BENCH_BACKUP_PLATFORM_MB (256; 0 skips it),
 *   BENCH_BACKUP_PLATFORM_SIZES (several, comma-separated, instead), BENCH_BACKUP_PLATFORM_UPLOAD_MBPS (8),
 *   BENCH_BACKUP_PLATFORM_ONLY (0; 1: that step alone, without the stack)
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { freePort, spawnOwned, waitFor } from '@skiff/testing';
import { applicationVolumeLabels } from '../apps/agent/src/deployments/volume-claims.js';
import { databaseVolumeName } from '../apps/control-plane/src/services/databases/database-spec.js';
import { type ProcessStack, dockerCommand, repoRoot, startProcessStack } from '../apps/control-plane/src/testing/process-stack.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from '../apps/control-plane/src/testing/s3-server.js';
import { platformDump } from './bench-platform-dump.js';
import { rssMb, settledRss } from './lib/process-memory.js';

const TARGET_MB = 100;
const SIZE_MB = Number(process.env.BENCH_BACKUP_MB ?? 1024);
if (!Number.isInteger(SIZE_MB) || SIZE_MB < 1) throw new Error('BENCH_BACKUP_MB must be a whole number of MB');
const WITH_VOLUME = process.env.BENCH_BACKUP_VOLUME !== '0';
const WITH_LIBSQL = process.env.BENCH_BACKUP_LIBSQL !== '0';
const WITH_POSTGRES = process.env.BENCH_BACKUP_POSTGRES !== '0';
const PLATFORM_SIZES = (process.env.BENCH_BACKUP_PLATFORM_SIZES ?? process.env.BENCH_BACKUP_PLATFORM_MB ?? '256').split(',').map(Number).filter((n) => n !== 0);
if (PLATFORM_SIZES.some((n) => !Number.isInteger(n) || n < 0)) throw new Error('BENCH_BACKUP_PLATFORM_MB (or _SIZES) must be whole numbers of MB');
const PLATFORM_ONLY = process.env.BENCH_BACKUP_PLATFORM_ONLY === '1';
const BUCKET = 'skiff-bench-backup';
const run = randomBytes(3).toString('hex');
const MB = 1024 * 1024;
/** Rows of one INSERT: gen_random_bytes gives at most 1024 bytes, ~100 MB a batch. */
const ROWS_PER_BATCH = 100_000;

const log = (text: string) => process.stderr.write(`bench backup: ${text}\n`);
const argvOf = (name: string) => process.env[name]?.split(' ').filter(Boolean);

/** POST /api/<operation> without a client timeout: a manual backup answers when the archive is stored. */
function post(stack: ProcessStack, operation: string, input: Record<string, unknown>): Promise<any> {
  const body = JSON.stringify(input);
  return new Promise((resolve, reject) => {
    const req = request(`${stack.apiBase}/api/${operation}`, { method: 'POST', headers: { 'x-api-key': stack.key, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${operation} answered ${res.statusCode}: ${text}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Sampled<T> {
  result: T;
  idle: number;
  peak: number;
  seconds: number;
}

/** Runs `work` while sampling the process's VmRSS every 100 ms; the idle figure is taken settled, just before. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<Sampled<T>> {
  const idle = await settledRss(pid);
  let peak = idle;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMb(pid));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const started = Date.now();
  try {
    const result = await work();
    return { result, idle, peak, seconds: (Date.now() - started) / 1000 };
  } finally {
    sampling = false;
    await sampler;
  }
}

/** The running container of a Swarm service. */
const containerOf = async (service: string) => {
  const r = await dockerCommand(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${service}`, '--filter', 'status=running']);
  return r.out.split('\n').find(Boolean) ?? null;
};

/** One psql statement in the database's own container; its unaligned output. */
async function psql(container: string, statement: string): Promise<string> {
  const r = await dockerCommand(['exec', container, 'psql', '-U', 'app', '-d', 'app', '-v', 'ON_ERROR_STOP=1', '-tAqc', statement], 600_000);
  if (!r.ok) throw new Error(`psql: ${r.err}`);
  return r.out;
}

type DatabaseKind = 'dbA' | 'dbE';
type Measured = Sampled<{ size: number }> & { data: number };

/**
 * A database service of `kind` created with `input`, deployed through the API (its volume removed
 * at the end), with a backup schedule whose first, small manual run loads the dump's code (the S3
 * client) into the agent before anything is measured.
 */
async function deployedDatabase(stack: ProcessStack, kind: DatabaseKind, database: string, input: Record<string, unknown>, destinationId: string, cleanUps: (() => Promise<unknown>)[]) {
  const db = await post(stack, `${kind}.create`, { appName: `bench-backup-${kind.toLowerCase()}-${run}`, environmentId: stack.environmentId, ...input });
  const id = db[`${kind}Id`] as string;
  stack.services.push(db.appName);
  const volume = databaseVolumeName(id);
  // After stack.close() removed the service: its task's container may take a moment to go.
  cleanUps.push(() => waitFor(async () => (await dockerCommand(['volume', 'rm', volume])).ok || !(await dockerCommand(['volume', 'inspect', volume])).ok, { timeoutMs: 60_000, intervalMs: 500, what: `volume ${volume} to be removed` }));
  return {
    id,
    appName: db.appName as string,
    /** Deploys it (after what must be set first) and sets up its backup. */
    async deploy(ready: () => Promise<boolean>) {
      await post(stack, `${kind}.deploy`, { [`${kind}Id`]: id });
      await waitFor(
        async () => {
          const status = (await stack.ok(`${kind}.one`, { [`${kind}Id`]: id })).applicationStatus;
          if (status === 'error') throw new Error(`the ${kind} deploy failed`);
          return status === 'done';
        },
        { timeoutMs: 180_000, intervalMs: 500, what: `the ${kind} deploy` },
      );
      await waitFor(ready, { timeoutMs: 120_000, intervalMs: 500, what: `the ${kind} database to accept connections` });
      const backup = await post(stack, 'backup.create', { schedule: '0 3 * * *', prefix: `${kind}/`, destinationId, database, databaseType: kind, [`${kind}Id`]: id, keepLatestCount: null });
      const manual = kind === 'dbA' ? 'backup.manualBackupDbA' : 'backup.manualBackupDbE';
      await post(stack, manual, { backupId: backup.backupId });
      return { backupId: backup.backupId as string, manualBackup: () => post(stack, manual, { backupId: backup.backupId }) as Promise<{ size: number; files: string[] }> };
    },
  };
}

/** `backup.restore` of `key` (force: it replaces the content), until its record says it ended. */
async function restored(stack: ProcessStack, backupId: string, key: string): Promise<void> {
  const restore = await post(stack, 'backup.restore', { backupId, key, force: true });
  const ended = await waitFor(
    async () => {
      const r = await stack.ok('backup.oneRestore', { restoreId: restore.restoreId });
      return r.status === 'running' ? null : r;
    },
    { timeoutMs: 3_600_000, intervalMs: 500, what: 'the restore to end' },
  );
  if (ended.status !== 'done') throw new Error(`the restore failed: ${JSON.stringify(ended)}`);
}

async function postgresBackup(stack: ProcessStack, destinationId: string, cleanUps: (() => Promise<unknown>)[]): Promise<Measured> {
  const db = await deployedDatabase(stack, 'dbA', 'app', { name: 'bench', containerImage: 'postgres:17' }, destinationId, cleanUps);
  let container = '';
  const backup = await db.deploy(async () => {
    container = (await containerOf(db.appName)) ?? '';
    return container !== '' && (await dockerCommand(['exec', container, 'pg_isready', '-U', 'app', '-d', 'app'])).ok;
  });

  log(`filling ${SIZE_MB} MB of random bytea rows`);
  // EXTERNAL storage: the values are never compressed by PostgreSQL either.
  await psql(container, 'CREATE EXTENSION IF NOT EXISTS pgcrypto; CREATE TABLE bench (id bigserial PRIMARY KEY, payload bytea); ALTER TABLE bench ALTER COLUMN payload SET STORAGE EXTERNAL');
  let data = 0;
  while (data < SIZE_MB * MB) {
    data = Number(await psql(container, `INSERT INTO bench (payload) SELECT gen_random_bytes(1024) FROM generate_series(1, ${ROWS_PER_BATCH}); SELECT pg_total_relation_size('bench')`));
  }
  await psql(container, 'CHECKPOINT');
  log(`database ${(data / MB).toFixed(0)} MB: backing up`);
  return { ...(await sampled(stack.agent.pid!, backup.manualBackup)), data };
}

/** Statements sent to libsql-server's HTTP API on its external port, in one pipeline; each one's rows. */
async function libsqlPipeline(port: number, credentials: string, statements: string[]): Promise<{ value?: string }[][][]> {
  const res = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
    body: JSON.stringify({ requests: [...statements.map((sql) => ({ type: 'execute', stmt: { sql } })), { type: 'close' }] }),
    signal: AbortSignal.timeout(1_800_000),
  });
  if (!res.ok) throw new Error(`libsql-server answered ${res.status}: ${await res.text()}`);
  const { results } = (await res.json()) as { results: { type: string; error?: { message: string }; response?: { result?: { rows: { value?: string }[][] } } }[] };
  const failed = results.find((r) => r.type === 'error');
  if (failed) throw new Error(`libsql-server: ${failed.error?.message}`);
  return results.slice(0, statements.length).map((r) => r.response?.result?.rows ?? []);
}

/** libSQL (dbE): backed up through the agent's relay (GET /dump), then restored (Hrana batches in one transaction). */
async function libsqlBackupAndRestore(stack: ProcessStack, destinationId: string, cleanUps: (() => Promise<unknown>)[]): Promise<{ backup: Measured; restore: Measured }> {
  const credentials = `bench:${randomBytes(18).toString('hex')}`;
  const db = await deployedDatabase(stack, 'dbE', 'edge', { name: 'edge', databaseUser: 'bench', databasePassword: credentials.slice('bench:'.length) }, destinationId, cleanUps);
  const port = await freePort();
  await post(stack, 'dbE.saveExternalPort', { dbEId: db.id, externalPort: port });
  const sql = (...statements: string[]) => libsqlPipeline(port, credentials, statements);
  const backup = await db.deploy(() => sql('SELECT 1').then(() => true, () => false));

  log(`filling ${SIZE_MB} MB of random blob rows in libSQL`);
  // randomblob: incompressible; the dump writes each value as hex, twice its bytes of SQL text.
  await sql('CREATE TABLE bench (id INTEGER PRIMARY KEY, payload BLOB)');
  const size = async () => Number((await sql('PRAGMA page_count', 'PRAGMA page_size')).map((rows) => Number(rows[0]?.[0]?.value)).reduce((a, b) => a * b));
  let data = 0;
  for (let batch = 0; data < SIZE_MB * MB; batch++) {
    const rows = Math.min(ROWS_PER_BATCH, Math.ceil((SIZE_MB * MB - data) / 1024) + 1);
    await sql(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) INSERT INTO bench SELECT ${batch * ROWS_PER_BATCH} + i, randomblob(1000) FROM n`);
    data = await size();
  }
  const count = async () => Number((await sql('SELECT count(*) FROM bench'))[0]?.[0]?.[0]?.value);
  const rows = await count();
  log(`libSQL database ${(data / MB).toFixed(0)} MB (${rows} rows): backing up`);
  const measuredBackup = await sampled(stack.agent.pid!, backup.manualBackup);
  await sql('DROP TABLE bench');
  log('libSQL: restoring');
  const measuredRestore = await sampled(stack.agent.pid!, () => restored(stack, backup.backupId, measuredBackup.result.files[0]!));
  const back = await count();
  if (back !== rows) throw new Error(`the restore brought back ${back} rows of ${rows}`);
  return { backup: { ...measuredBackup, data }, restore: { ...measuredRestore, result: measuredBackup.result, data } };
}

async function volumeBackup(stack: ProcessStack, destinationId: string, cleanUps: (() => Promise<unknown>)[]): Promise<Measured> {
  const app = await stack.containerApplication('bench-vol');
  // A volume's name starts with its application's appName (mounts.create refuses names another workload could have).
  const volume = `${app.appName}-data`;
  cleanUps.push(() => dockerCommand(['volume', 'rm', '-f', volume]));
  // Made with the application's labels, as its deploy makes it: the agent archives only its application's own volumes.
  const labels = Object.entries(applicationVolumeLabels(app.applicationId)).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
  const made = await dockerCommand(['volume', 'create', ...labels, volume]);
  if (!made.ok) throw new Error(`creating the volume: ${made.err}`);
  await post(stack, 'mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: volume, mountPath: '/data' });
  const backup = await post(stack, 'volumeBackup.create', { applicationId: app.applicationId, volumeName: volume, destinationId, schedule: '0 3 * * *', prefix: 'vol/' });
  log(`writing ${SIZE_MB} files of 1 MiB of random bytes into volume ${volume}`);
  const fill = await dockerCommand(
    ['run', '--rm', '--name', `skiff-bench-fill-${run}`, '-v', `${volume}:/data`, 'busybox:latest', 'sh', '-c', 'i=0; while [ $i -lt "$1" ]; do head -c 1048576 /dev/urandom > /data/f$i; i=$((i+1)); done', 'sh', String(SIZE_MB)],
    1_800_000,
  );
  if (!fill.ok) throw new Error(`filling the volume: ${fill.err}`);
  // The first, small archive loads the volume code; then the whole volume is measured.
  log(`volume of ${SIZE_MB} MB: backing up`);
  const measured = await sampled(stack.agent.pid!, () => post(stack, 'volumeBackup.manualBackup', { volumeBackupId: backup.volumeBackupId }) as Promise<{ size: number }>);
  return { ...measured, data: SIZE_MB * MB };
}

/** The embedded database's dump, measured in this process (the control plane's side of a platform backup). */
async function platformStep() {
  for (const size of PLATFORM_SIZES) {
    const { data, figures } = await platformDump(size, log);
    console.log();
    console.log(`the embedded database's platform dump (PGlite, ${(data / MB).toFixed(0)} MB on disk), this process's RSS, node ${process.version}`);
    for (const f of figures) {
      console.log(
        `  ${f.what}: gzipped ${(f.gzipped / MB).toFixed(1)} MB, ${f.seconds.toFixed(1)} s, RSS idle ${f.idle.toFixed(1)} MB, peak ${f.peak.toFixed(1)} MB (growth ${(f.peak - f.idle).toFixed(1)} MB); a query waited at most ${f.longestWait.toFixed(0)} ms (${(f.waited / 1000).toFixed(1)} s in all)`,
      );
    }
  }
}

async function main() {
  await platformStep();
  if (PLATFORM_ONLY) return;
  const agentCmd = argvOf('SKIFF_BENCH_AGENT_CMD');
  if (!agentCmd) throw new Error('run it through tools/bench backup (it bundles the agent and passes AGENT_CMD)');
  const [node, ...rest] = agentCmd;
  const flags = rest.slice(0, -1);
  let stack: ProcessStack | undefined;
  let s3: Awaited<ReturnType<typeof startS3>> | undefined;
  let bare: ReturnType<typeof spawnOwned> | undefined;
  const cleanUps: (() => Promise<unknown>)[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      if (bare && bare.exitCode === null && bare.signalCode === null) bare.kill('SIGKILL');
      await stack?.close().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
      await dockerCommand(['rm', '-f', `skiff-bench-fill-${run}`]);
      for (const step of cleanUps) await step().catch((err: unknown) => log(`cleaning up: ${String(err)}`));
      await s3?.close().catch((err: unknown) => log(`stopping the S3 server: ${String(err)}`));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

  try {
    log('starting the S3 server, NATS, the control plane and the local agent (bundles)');
    s3 = await startS3([BUCKET]);
    stack = await startProcessStack({ label: `bench-backup-${run}`, controlPlaneArgv: argvOf('SKIFF_BENCH_CONTROL_PLANE_CMD'), agentArgv: agentCmd });
    bare = spawnOwned(node!, [...flags, '-e', 'setInterval(() => {}, 1e9)'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: 'ignore' });
    const fresh = await settledRss(stack.agent.pid!);
    const destination = await post(stack, 'destination.create', { name: `bench-${run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });

    const rows: [string, Measured][] = [];
    if (WITH_POSTGRES) rows.push(['PostgreSQL dump (pg_dump)', await postgresBackup(stack, destination.destinationId, cleanUps)]);
    if (WITH_VOLUME) rows.push(['volume archive (tar)', await volumeBackup(stack, destination.destinationId, cleanUps)]);
    if (WITH_LIBSQL) {
      const libsql = await libsqlBackupAndRestore(stack, destination.destinationId, cleanUps);
      rows.push(['libSQL dump (GET /dump through the relay)', libsql.backup], ['libSQL restore (Hrana batches, one transaction)', libsql.restore]);
    }
    const floor = await settledRss(bare.pid!);

    console.log();
    console.log(`agent memory during a backup of ${SIZE_MB} MB, agent run as \`${agentCmd.join(' ')}\`, node ${process.version}`);
    console.log(`bare node idle (floor): ${floor.toFixed(1)} MB; agent idle after it joined, before any backup: ${fresh.toFixed(1)} MB`);
    for (const [what, m] of rows) {
      const under = m.peak < TARGET_MB;
      console.log(`${what}:`);
      console.log(`  data ${(m.data / MB).toFixed(0)} MB, archive ${(m.result.size / MB).toFixed(0)} MB, ${m.seconds.toFixed(1)} s (${(m.data / MB / m.seconds).toFixed(1)} MB/s)`);
      console.log(`  agent RSS idle ${m.idle.toFixed(1)} MB, peak ${m.peak.toFixed(1)} MB (growth ${(m.peak - m.idle).toFixed(1)} MB)`);
      console.log(`  peak / idle ${(m.peak / m.idle).toFixed(2)}, peak / bare node ${(m.peak / floor).toFixed(2)}, idle / bare node ${(m.idle / floor).toFixed(2)}`);
      console.log(`  peak under ${TARGET_MB} MB: ${under ? 'yes' : 'NO'}`);
    }
  } catch (err) {
    if (stack) log(`the agent's last output:\n${stack.agent.tail(4000)}`);
    throw err;
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
