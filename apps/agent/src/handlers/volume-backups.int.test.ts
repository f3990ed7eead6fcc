// BackupVolume and RestoreVolume against the real Docker Engine (a named volume, busybox
// throw-away containers) and an S3-compatible server in this process: a volume's files go
// into the bucket as a gzipped tar and come back after they were deleted; a restore is refused
// while a running container mounts the volume, unless forced; a backup of a missing volume fails.
// Only the application's own volume (its labels) is archived or overwritten: another
// application's, a database's or an unlabelled one is refused and left as it was.
// With a passphrase the archive is an age file that the reference tool (`age -d`, Debian's
// package, given the passphrase on a terminal) decrypts, and a wrong passphrase restores nothing.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { type Command, CommandKind, CommandStatus, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeVolumeContainers } from '../dumps/volume-containers.js';
import { backupVolumeHandler } from './backup-volume.js';
import { restoreVolumeHandler } from './restore-volume.js';
import { startTestS3, type TestS3 } from '../testing/test-s3.js';

const run = randomBytes(3).toString('hex');
const VOLUME = `volbk-${run}-data`;
const USER = `volbk-${run}-user`;
const OTHER = `volbk-${run}-other`;
const DB_VOLUME = `volbk-${run}-db`;
const HAND_MADE = `volbk-${run}-hand`;
const RECREATED = `volbk-${run}-again`;
const APP_LABELS = ['--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', 'skiff.id=app_1'];
const BUCKET = 'volumes';
/** Where a test keeps the files it decrypts. */
let scratch: string;
let s3: TestS3;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));
/** Runs a shell line in a busybox container that mounts the volume at /data. */
const inVolume = (script: string, volume = VOLUME) => docker(['run', '--rm', '-v', `${volume}:/data`, 'busybox:latest', 'sh', '-c', script]);
const toolContainers = async () => (await docker(['ps', '-aq', '--filter', 'label=skiff.volume-tool'])).out;

beforeAll(async () => {
  s3 = await startTestS3(BUCKET);
  scratch = await mkdtemp(join(tmpdir(), 'skiff-agent-vb-'));
  expect((await docker(['volume', 'create', ...APP_LABELS, VOLUME])).ok).toBe(true);
});
afterAll(async () => {
  await docker(['rm', '-f', USER]);
  await docker(['volume', 'rm', '-f', VOLUME, OTHER, DB_VOLUME, HAND_MADE, RECREATED]);
  await s3?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const engine = new Dockerode({ socketPath: '/var/run/docker.sock' });
const deps = () => ({ containers: new DockerodeDatabaseContainers(engine), volumes: new DockerodeVolumeContainers(engine) });
const command = (kind: 'backup' | 'restore', key: string, options: { volume?: string; force?: boolean; passphrase?: string } = {}): Command => {
  const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app_1', appName: 'shop' }, volumeName: options.volume ?? VOLUME };
  const object = s3.object(key, { passphrase: options.passphrase ?? '' });
  return {
    commandId: `cmd_${randomBytes(4).toString('hex')}`,
    serverId: 'local',
    kind: kind === 'backup' ? CommandKind.COMMAND_KIND_BACKUP_VOLUME : CommandKind.COMMAND_KIND_RESTORE_VOLUME,
    workloadKey: 'application:app_1',
    deadline: undefined,
    createdAt: undefined,
    payload: kind === 'backup' ? { $case: 'backupVolume', value: { target, object } } : { $case: 'restoreVolume', value: { target, object, force: options.force ?? false } },
  };
};
const context = (c: Command) => ({ command: c, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
const ok = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
const stored = (key: string) => s3.read(key);

/** `age -d` of the file with `passphrase` typed on its terminal (script(1) gives it one): its output, or its error. */
async function ageDecrypt(file: Buffer, passphrase: string): Promise<{ ok: boolean; out: Buffer; err: string }> {
  const input = join(scratch, 'in.age');
  const output = join(scratch, `out-${randomBytes(3).toString('hex')}`);
  await writeFile(input, file);
  const result = await new Promise<{ ok: boolean; err: string }>((resolve) => {
    const child = execFile('script', ['-qec', `age -d -o ${output} ${input}`, '/dev/null'], (err, stdout) => resolve({ ok: !err, err: stdout }));
    child.stdin!.end(`${passphrase}\n`);
  });
  return { ...result, out: result.ok ? await readFile(output) : Buffer.alloc(0) };
}

describe('volume backups and restores on the agent', () => {
  it('archives the volume into the bucket, and restores its files after they were deleted', async () => {
    expect((await inVolume('mkdir -p /data/notes && echo anchor > /data/notes/a.txt && chmod 600 /data/notes/a.txt')).ok).toBe(true);
    const backup = backupVolumeHandler(deps());
    const c = command('backup', 'v/bkp/1.tar.gz');
    expect(await backup.validate(c)).toBeNull();
    expect(await backup.run(context(c))).toEqual(ok);
    const stored = await s3.read('v/bkp/1.tar.gz');
    expect(gunzipSync(stored).toString('latin1')).toContain('notes/a.txt');

    expect((await inVolume('rm -rf /data/notes && echo stray > /data/extra.txt')).ok).toBe(true);
    expect(await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/1.tar.gz')))).toEqual(ok);
    const after = await inVolume('cat /data/notes/a.txt; stat -c %a /data/notes/a.txt; ls /data');
    expect(after.out.split('\n')).toEqual(['anchor', '600', 'notes']);
    expect(await toolContainers()).toBe('');
  }, 60_000);

  it('refuses to restore under a running container that mounts the volume, unless forced', async () => {
    expect((await docker(['run', '-d', '--name', USER, '-v', `${VOLUME}:/data`, 'busybox:latest', 'sleep', '600'])).ok).toBe(true);
    const refused = await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/1.tar.gz')));
    expect(refused.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(refused.reason).toContain(`mounted by running containers (${USER})`);
    expect(await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/1.tar.gz', { force: true })))).toEqual(ok);
    await docker(['rm', '-f', USER]);
  }, 60_000);

  it('fails on a volume that does not exist, and on a file that is not an archive, removing its containers', async () => {
    const missing = await backupVolumeHandler(deps()).run(context(command('backup', 'v/bkp/2.tar.gz', { volume: `volbk-${run}-none` })));
    expect(missing).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: expect.stringContaining('does not exist') });
    expect((await docker(['volume', 'inspect', `volbk-${run}-none`])).ok).toBe(false);
    expect(await backupVolumeHandler(deps()).validate(command('backup', 'k', { volume: '../etc' }))).toBe('the command names no valid volume');
    const notFound = await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/none.tar.gz')));
    expect(notFound.reason).toMatch(/^downloading v\/bkp\/none\.tar\.gz from bucket volumes at 127\.0\.0\.1:\d+: the S3 server answered 404 NoSuchKey/);
    expect(await toolContainers()).toBe('');
  }, 60_000);

  it('refuses to archive or overwrite a volume that is not the application’s, and makes a missing one as the application’s', async () => {
    const make = (name: string, labels: string[]) => docker(['volume', 'create', ...labels, name]);
    expect((await make(OTHER, ['--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', 'skiff.id=app_2'])).ok).toBe(true);
    expect((await make(DB_VOLUME, ['--label', 'skiff.managed=true', '--label', 'skiff.kind=database', '--label', 'skiff.id=app_1'])).ok).toBe(true);
    expect((await make(HAND_MADE, [])).ok).toBe(true);
    for (const volume of [OTHER, DB_VOLUME, HAND_MADE]) {
      expect((await inVolume('echo theirs > /data/keep.txt', volume)).ok).toBe(true);
      const archived = await backupVolumeHandler(deps()).run(context(command('backup', `v/foreign/${volume}.tar.gz`, { volume })));
      expect(archived).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: expect.stringContaining('is not this application’s') });
      const overwritten = await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/1.tar.gz', { volume, force: true })));
      expect(overwritten).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: expect.stringContaining('is not this application’s') });
      expect((await inVolume('cat /data/keep.txt', volume)).out).toBe('theirs');
    }
    await expect(s3.read(`v/foreign/${OTHER}.tar.gz`)).rejects.toThrow();

    expect(await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/1.tar.gz', { volume: RECREATED })))).toEqual(ok);
    const labels = JSON.parse((await docker(['volume', 'inspect', '--format', '{{json .Labels}}', RECREATED])).out);
    expect(labels).toMatchObject({ 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': 'app_1' });
    expect((await inVolume('cat /data/notes/a.txt', RECREATED)).out).toBe('anchor');
    expect(await toolContainers()).toBe('');
  }, 90_000);

  it('encrypts with a passphrase into an age file that age -d decrypts, and restores only with that passphrase', async () => {
    const PASSPHRASE = `sea chart ${run} lighthouse`;
    expect((await inVolume('rm -rf /data/* && echo secret-cargo > /data/manifest.txt')).ok).toBe(true);
    expect(await backupVolumeHandler(deps()).run(context(command('backup', 'v/bkp/3.tar.gz.age', { passphrase: PASSPHRASE })))).toEqual(ok);
    const file = await stored('v/bkp/3.tar.gz.age');
    expect(file.subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    expect(file.toString('latin1')).not.toContain('secret-cargo');

    const reference = await ageDecrypt(file, PASSPHRASE);
    expect(reference.ok, reference.err).toBe(true);
    expect(gunzipSync(reference.out).toString('latin1')).toContain('secret-cargo');
    const wrongly = await ageDecrypt(file, 'not the passphrase at all');
    expect(wrongly.ok).toBe(false);
    expect(wrongly.err).toContain('incorrect passphrase');

    expect((await inVolume('rm /data/manifest.txt')).ok).toBe(true);
    const refused = await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/3.tar.gz.age', { passphrase: 'not the passphrase at all' })));
    expect(refused).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: expect.stringContaining('could not be decrypted') });
    const none = await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/3.tar.gz.age')));
    expect(none.reason).toContain('has no passphrase');
    expect((await inVolume('ls /data')).out).toBe('');
    expect(await restoreVolumeHandler(deps()).run(context(command('restore', 'v/bkp/3.tar.gz.age', { passphrase: PASSPHRASE })))).toEqual(ok);
    expect((await inVolume('cat /data/manifest.txt')).out).toBe('secret-cargo');
    expect(await toolContainers()).toBe('');
  }, 60_000);
});
