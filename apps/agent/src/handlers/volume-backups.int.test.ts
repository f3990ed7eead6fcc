// BackupVolume and RestoreVolume against the real Docker Engine (a named volume, busybox
// throw-away containers) and an S3-compatible server in this process: a volume's files go
// into the bucket as a gzipped tar and come back after they were deleted; a restore is refused
// while a running container mounts the volume, unless forced; a backup of a missing volume fails.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Command, CommandKind, CommandStatus, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeVolumeContainers } from '../dumps/volume-containers.js';
import { backupVolumeHandler } from './backup-volume.js';
import { restoreVolumeHandler } from './restore-volume.js';

const run = randomBytes(3).toString('hex');
const VOLUME = `volbk-${run}-data`;
const USER = `volbk-${run}-user`;
const BUCKET = 'volumes';
let s3dir: string;
let s3: S3rver;
let endpoint: string;
let client: S3Client;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));
/** Runs a shell line in a busybox container that mounts the volume at /data. */
const inVolume = (script: string) => docker(['run', '--rm', '-v', `${VOLUME}:/data`, 'busybox:latest', 'sh', '-c', script]);
const toolContainers = async () => (await docker(['ps', '-aq', '--filter', 'label=skiff.volume-tool'])).out;

beforeAll(async () => {
  s3dir = await mkdtemp(join(tmpdir(), 'skiff-agent-s3-'));
  s3 = new S3rver({ port: 0, address: '127.0.0.1', directory: s3dir, silent: true, configureBuckets: [{ name: BUCKET }] });
  endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
  client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  expect((await docker(['volume', 'create', VOLUME])).ok).toBe(true);
});
afterAll(async () => {
  await docker(['rm', '-f', USER]);
  await docker(['volume', 'rm', '-f', VOLUME]);
  client?.destroy();
  await s3?.close();
  await rm(s3dir, { recursive: true, force: true });
});

const engine = new Dockerode({ socketPath: '/var/run/docker.sock' });
const deps = () => ({ containers: new DockerodeDatabaseContainers(engine), volumes: new DockerodeVolumeContainers(engine) });
const command = (kind: 'backup' | 'restore', key: string, options: { volume?: string; force?: boolean } = {}): Command => {
  const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app_1', appName: 'shop' }, volumeName: options.volume ?? VOLUME };
  const object = { endpoint, region: 'us-east-1', bucket: BUCKET, key, accessKey: 'S3RVER', secretKey: 'S3RVER' };
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

describe('volume backups and restores on the agent', () => {
  it('archives the volume into the bucket, and restores its files after they were deleted', async () => {
    expect((await inVolume('mkdir -p /data/notes && echo anchor > /data/notes/a.txt && chmod 600 /data/notes/a.txt')).ok).toBe(true);
    const backup = backupVolumeHandler(deps());
    const c = command('backup', 'v/bkp/1.tar.gz');
    expect(await backup.validate(c)).toBeNull();
    expect(await backup.run(context(c))).toEqual(ok);
    const stored = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'v/bkp/1.tar.gz' }))).Body!.transformToByteArray());
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
    expect(notFound.reason).toContain('the download failed: NoSuchKey');
    expect(await toolContainers()).toBe('');
  }, 60_000);
});
