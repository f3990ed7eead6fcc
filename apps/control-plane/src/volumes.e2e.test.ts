// Volume backups end to end (issue 18, sections 3–4): an application's named volume holds a
// file; `volumeBackup.manualBackup` has the agent archive it (tar in a throw-away container
// that mounts it read-only, gzipped, multipart) into an S3-compatible server in this
// process; the file deleted, a restore is refused while the application runs, forced it
// brings the file back, and with the application stopped it needs no force.
import { gunzipSync } from 'node:zlib';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from './testing/s3-server.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

const BUCKET = 'skiff-e2e-volumes';
let s: TestStack;
let s3: Awaited<ReturnType<typeof startS3>>;
const volumes: string[] = [];
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  s = await startTestStack('volumes');
}, 120_000);
afterAll(async () => {
  await s?.close();
  await s3?.close();
  for (const volume of volumes) {
    await waitFor(async () => (await docker(['volume', 'rm', volume])).ok || !(await docker(['volume', 'inspect', volume])).ok, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: `volume ${volume} to be removed`,
    }).catch(() => undefined);
  }
}, 90_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await s.t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};
/** Runs a shell line in a busybox container that mounts the volume at /data. */
const inVolume = (volume: string, script: string) => docker(['run', '--rm', '-v', `${volume}:/data`, 'busybox:latest', 'sh', '-c', script]);
const restored = (restoreId: string) =>
  waitFor(
    async () => {
      const r = await ok('volumeBackup.oneRestore', { restoreId });
      return r.status === 'running' ? null : r;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: () => `restore ${restoreId} to end (agent output: ${s.agentOutput().slice(-2000)})` },
  );

describe('a volume backup', () => {
  it('archives an application volume to S3 and restores a deleted file', { timeout: 300_000 }, async () => {
    const volume = `e2e-volumes-${s.run}-data`;
    const app = await s.containerApplication('vols', { containerImage: 'busybox:latest' });
    await ok('application.update', {
      applicationId: app.applicationId,
      command: 'sh',
      args: ['-c', 'exec sleep 3600'],
      updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 500_000_000 },
      stopGracePeriodCluster: 1_000_000_000,
    });
    await ok('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: volume, mountPath: '/data' });
    volumes.push(volume);
    expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
    expect((await inVolume(volume, `echo 'logbook ${s.run}' > /data/log.txt`)).ok).toBe(true);

    const destination = await ok('destination.create', { name: `e2e-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
    const backup = await ok('volumeBackup.create', { applicationId: app.applicationId, volumeName: volume, destinationId: destination.destinationId, schedule: '0 3 * * *', prefix: `e2e-${s.run}/` });
    const run = await ok('volumeBackup.manualBackup', { volumeBackupId: backup.volumeBackupId });
    expect(run.files).toHaveLength(1);
    expect(run.size).toBeGreaterThan(0);
    const key = run.files[0] as string;
    expect(key).toMatch(new RegExp(`^e2e-${s.run}/${backup.volumeBackupId}/.+\\.tar\\.gz$`));
    expect(gunzipSync(await s3.get(BUCKET, key)).toString('latin1')).toContain(`logbook ${s.run}`);
    const events = await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'volumeBackup').execute();
    expect(events.filter((e) => (e.summary as any).volumeBackupId === backup.volumeBackupId).map((e) => e.outcome)).toEqual(['success']);

    // Deleted; refused while the application runs; forced, the file is back.
    expect((await inVolume(volume, 'rm /data/log.txt')).ok).toBe(true);
    const refused = await restored((await ok('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key })).restoreId);
    expect(refused).toMatchObject({ status: 'error', log: expect.stringContaining('mounted by running containers') });
    expect(await restored((await ok('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key, force: true })).restoreId)).toMatchObject({ status: 'done' });
    expect((await inVolume(volume, 'cat /data/log.txt')).out).toBe(`logbook ${s.run}`);

    // Stopped, the application no longer holds the volume: no force needed.
    await ok('application.stop', { applicationId: app.applicationId });
    await waitFor(async () => (await docker(['ps', '-q', '--filter', `volume=${volume}`])).out === '', { timeoutMs: 60_000, intervalMs: 250, what: 'the application to stop' });
    expect((await inVolume(volume, 'rm /data/log.txt')).ok).toBe(true);
    expect(await restored((await ok('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key })).restoreId)).toMatchObject({ status: 'done' });
    expect((await inVolume(volume, 'cat /data/log.txt')).out).toBe(`logbook ${s.run}`);
    expect((await docker(['ps', '-aq', '--filter', 'label=skiff.volume-tool'])).out).toBe('');
  });
});
