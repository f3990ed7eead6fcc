/**
 * The agent's memory during a large backup (issue 18), run by `tools/bench backup`: NATS, the
 * bundled control plane and the bundled agent as tools/up runs them (CONTROL_PLANE_CMD,
 * AGENT_CMD), the tests' S3 server (s3rver, in this process), then
 *   1. a PostgreSQL service (dbA, image postgres:17) filled with BENCH_BACKUP_MB of random
 *      bytea rows (they compress barely) and backed up with `backup.manualBackupDbA`;
 *   2. a named volume holding BENCH_BACKUP_MB of 1 MiB files of random bytes, backed up with
 *      `volumeBackup.manualBackup` (skipped with BENCH_BACKUP_VOLUME=0).
 * For each: the agent's VmRSS sampled every 100 ms during the run, beside its idle figure just
 * before (after a first small backup has loaded the S3 client's code) and a bare `node` started
 * with the agent's binary and flags (the floor), and the agent's RSS before any backup. Target: the peak under 100 MB.
 * Everything it creates (Swarm services, volumes, containers, directories) is removed at the
 * end, also after a failure or Ctrl-C.
 * First, the control plane's side: the embedded database's platform dump (bench-platform-dump.ts).
 *   BENCH_BACKUP_MB (1024), BENCH_BACKUP_VOLUME (1), BENCH_BACKUP_PLATFORM_MB (256; 0 skips it),
 *   BENCH_BACKUP_PLATFORM_SIZES (several, comma-separated, instead), BENCH_BACKUP_PLATFORM_UPLOAD_MBPS (8),
 *   BENCH_BACKUP_PLATFORM_ONLY (0; 1: that step alone, without the stack)
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { spawnOwned, waitFor } from '@skiff/testing';
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

async function databaseBackup(stack: ProcessStack, destinationId: string, cleanUps: (() => Promise<unknown>)[]): Promise<Sampled<{ size: number }> & { data: number }> {
  const db = await post(stack, 'dbA.create', { name: 'bench', appName: `bench-backup-${run}`, environmentId: stack.environmentId, containerImage: 'postgres:17' });
  stack.services.push(db.appName);
  const volume = databaseVolumeName(db.dbAId);
  // After stack.close() removed the service: its task's container may take a moment to go.
  cleanUps.push(() => waitFor(async () => (await dockerCommand(['volume', 'rm', volume])).ok || !(await dockerCommand(['volume', 'inspect', volume])).ok, { timeoutMs: 60_000, intervalMs: 500, what: `volume ${volume} to be removed` }));
  await post(stack, 'dbA.deploy', { dbAId: db.dbAId });
  await waitFor(async () => (await stack.ok('dbA.one', { dbAId: db.dbAId })).applicationStatus === 'done', { timeoutMs: 180_000, intervalMs: 500, what: 'the database deploy' });
  const container = await waitFor(async () => {
    const id = await containerOf(db.appName);
    return id && (await dockerCommand(['exec', id, 'pg_isready', '-U', 'app', '-d', 'app'])).ok ? id : null;
  }, { timeoutMs: 120_000, intervalMs: 500, what: 'PostgreSQL to accept connections' });

  const backup = await post(stack, 'backup.create', { schedule: '0 3 * * *', prefix: 'db/', destinationId, database: 'app', databaseType: 'dbA', dbAId: db.dbAId, keepLatestCount: null });
  // A first backup of the empty database loads the dump's code (the S3 client) into the agent.
  await post(stack, 'backup.manualBackupDbA', { backupId: backup.backupId });

  log(`filling ${SIZE_MB} MB of random bytea rows`);
  // EXTERNAL storage: the values are never compressed by PostgreSQL either.
  await psql(container, 'CREATE EXTENSION IF NOT EXISTS pgcrypto; CREATE TABLE bench (id bigserial PRIMARY KEY, payload bytea); ALTER TABLE bench ALTER COLUMN payload SET STORAGE EXTERNAL');
  let data = 0;
  while (data < SIZE_MB * MB) {
    data = Number(await psql(container, `INSERT INTO bench (payload) SELECT gen_random_bytes(1024) FROM generate_series(1, ${ROWS_PER_BATCH}); SELECT pg_total_relation_size('bench')`));
  }
  await psql(container, 'CHECKPOINT');
  log(`database ${(data / MB).toFixed(0)} MB: backing up`);
  const measured = await sampled(stack.agent.pid!, () => post(stack, 'backup.manualBackupDbA', { backupId: backup.backupId }) as Promise<{ size: number }>);
  return { ...measured, data };
}

async function volumeBackup(stack: ProcessStack, destinationId: string, cleanUps: (() => Promise<unknown>)[]): Promise<Sampled<{ size: number }> & { data: number }> {
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

    const rows: [string, Sampled<{ size: number }> & { data: number }][] = [];
    rows.push(['PostgreSQL dump (pg_dump)', await databaseBackup(stack, destination.destinationId, cleanUps)]);
    if (WITH_VOLUME) rows.push(['volume archive (tar)', await volumeBackup(stack, destination.destinationId, cleanUps)]);
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
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
