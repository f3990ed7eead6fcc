// Applications' mounts end to end (issue 18, section 2): a named volume and a secret file
// mount; data written to the volume survives a redeploy, the file is there read-only; the
// application deleted with deleteVolumes takes its volume and its files folder, one deleted
// without keeps its volume (removed here afterwards).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
const volumes: string[] = [];
beforeAll(async () => {
  s = await startTestStack('mounts');
}, 120_000);
afterAll(async () => {
  await s?.close();
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

/** Runs `script` in the application's running container. */
async function exec(appName: string, script: string) {
  const id = await waitFor(
    async () => (await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`, '--filter', 'status=running'])).out.split('\n')[0] || null,
    { timeoutMs: 30_000, intervalMs: 250, what: `a running container of ${appName}` },
  );
  return docker(['exec', id, 'sh', '-c', script]);
}

/** An application sleeping in busybox, with a volume at /data and a secret file at /etc/app/greeting.txt. */
async function mountedApplication(name: string, volume: string, greeting: string) {
  const app = await s.containerApplication(name, { containerImage: 'busybox:latest' });
  await ok('application.update', {
    applicationId: app.applicationId,
    command: 'sh',
    args: ['-c', 'exec sleep 3600'],
    updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 500_000_000 },
    stopGracePeriodCluster: 1_000_000_000,
  });
  await ok('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: volume, mountPath: '/data' });
  await ok('mounts.create', { applicationId: app.applicationId, type: 'file', filePath: 'conf/greeting.txt', content: s.t.watch.secret(greeting), secret: true, mountPath: '/etc/app/greeting.txt' });
  volumes.push(volume);
  return app;
}

const deleted = (applicationId: string) =>
  waitFor(async () => (await s.t.call('application.one', { applicationId })).status === 404, {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: () => `application ${applicationId} to be deleted (agent output: ${s.agentOutput().slice(-2000)})`,
  });

describe('an application with a named volume and a file mount', () => {
  it('keeps the volume across a redeploy, reads the file, and removes the volume only with deleteVolumes', { timeout: 240_000 }, async () => {
    const volume = `e2e-mounts-${s.run}-data`;
    const greeting = `hello from a mounted file ${s.run}`;
    const app = await mountedApplication('mounted', volume, greeting);
    expect((await s.deployAndWait(app.applicationId)).status).toBe('done');

    const labels = JSON.parse((await docker(['volume', 'inspect', '--format', '{{json .Labels}}', volume])).out);
    expect(labels).toMatchObject({ 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': app.applicationId });
    expect((await exec(app.appName, 'echo kept-data > /data/state && cat /etc/app/greeting.txt')).out).toBe(greeting);
    expect((await exec(app.appName, 'echo changed > /etc/app/greeting.txt')).ok).toBe(false);
    expect(existsSync(join(s.agentDir, 'applications', app.applicationId, 'files', 'conf', 'greeting.txt'))).toBe(true);

    expect((await s.deployAndWait(app.applicationId, 'application.redeploy')).status).toBe('done');
    expect((await exec(app.appName, 'cat /data/state')).out).toBe('kept-data');
    expect((await exec(app.appName, 'cat /etc/app/greeting.txt')).out).toBe(greeting);

    const answer = await ok('application.delete', { applicationId: app.applicationId, deleteVolumes: true });
    expect(answer).toMatchObject({ deleteVolumes: true, keptVolumes: [] });
    await deleted(app.applicationId);
    expect((await docker(['volume', 'inspect', volume])).ok).toBe(false);
    expect(existsSync(join(s.agentDir, 'applications', app.applicationId))).toBe(false);

    // Without deleteVolumes the volume stays, named in the answer; another application cannot take it.
    const keptVolume = `e2e-mounts-${s.run}-kept`;
    const kept = await mountedApplication('kept', keptVolume, greeting);
    expect((await s.deployAndWait(kept.applicationId)).status).toBe('done');
    await exec(kept.appName, 'echo still-here > /data/state');
    expect(await ok('application.delete', { applicationId: kept.applicationId })).toMatchObject({ deleteVolumes: false, keptVolumes: [keptVolume] });
    await deleted(kept.applicationId);
    expect((await docker(['volume', 'inspect', keptVolume])).ok).toBe(true);

    const thief = await s.containerApplication('thief', { containerImage: 'busybox:latest' });
    await ok('mounts.create', { applicationId: thief.applicationId, type: 'volume', volumeName: keptVolume, mountPath: '/data' });
    const refused = await s.deployAndWait(thief.applicationId);
    expect(refused.status).toBe('error');
    const log = (await s.t.call('deployment.readLogs', { deploymentId: (refused as { deploymentId: string }).deploymentId })).body;
    expect(JSON.stringify(log)).toContain(`volume ${keptVolume} is not allowed for this application`);
  });
});
