/**
 * Host cleanups (HostCleanupControl) against the real engine, confined by `only_label` to the
 * objects this run creates (the engine is shared: nothing else may go). Images come from
 * `docker commit` of a busybox container (a label makes each distinct); a Skiff service with
 * no replicas stands for a stopped workload whose current and previous specs name two of
 * them and whose mount names a volume. Everything is removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { HostCleanup } from '@skiff/proto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerodeCleanupEngine } from '../docker/dockerode-cleanup.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { CommandScheduler } from '../pipeline/scheduler.js';
import { ensureCommandStream, requestControl } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { HostCleanupControl } from './host-cleanup.js';

const DOCKER = '/usr/bin/docker';
const run = randomBytes(3).toString('hex');
const LABEL = `skiff.test.cleanup=${run}`;
const docker = (...args: string[]) => execFileSync(DOCKER, args, { encoding: 'utf8' }).trim();
const engineApi = new Dockerode({ socketPath: '/var/run/docker.sock' });
const engine = new DockerodeCleanupEngine(engineApi);
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const appName = `cl-app-${run}`;
const service = `cl-svc-${run}`;
const names = {
  seed: `cl-seed-${run}`,
  workloadContainer: `cl-workload-${run}`,
  strayContainer: `cl-stray-${run}`,
  strayContainer2: `cl-stray2-${run}`,
  previousImage: `cl-prev-${run}:1`,
  currentImage: `cl-cur-${run}:1`,
  unusedImage: `cl-unused-${run}:1`,
  mountedVolume: `cl-mounted-${run}`,
  keptVolume: `cl-kept-${run}`,
  appVolume: `${appName}_data`,
  freeVolume: `cl-free-${run}`,
};

const exists = (kind: 'container' | 'image' | 'volume', name: string) => {
  try {
    docker(kind, 'inspect', name);
    return true;
  } catch {
    return false;
  }
};

/** A new local image labelled for this run (committed from the seed container). */
const commitImage = (tag: string) => docker('commit', '--change', `LABEL skiff.test.cleanup=${run} skiff.test.image=${tag}`, names.seed, tag);

const request = (fields: Partial<HostCleanup>): HostCleanup => ({
  images: false,
  danglingImages: false,
  stoppedContainers: false,
  buildCache: false,
  volumes: false,
  keepVolumeNames: [],
  keepAppNames: [],
  keepImages: [],
  onlyLabel: LABEL,
  waitTimeoutMs: 30_000,
  ...fields,
});

beforeAll(async () => {
  await new DockerodeDriver().ensureSwarm();
  docker('create', '--name', names.seed, '--label', LABEL, 'busybox:latest', 'true');
  for (const tag of [names.previousImage, names.currentImage, names.unusedImage]) commitImage(tag);
  docker('create', '--name', names.workloadContainer, '--label', LABEL, '--label', 'skiff.managed=true', '--label', `skiff.id=${run}`, 'busybox:latest', 'true');
  docker('create', '--name', names.strayContainer, '--label', LABEL, 'busybox:latest', 'true');
  for (const v of [names.mountedVolume, names.keptVolume, names.appVolume, names.freeVolume]) docker('volume', 'create', '--label', LABEL, v);
  // A stopped workload: no replicas; its update leaves the first image in PreviousSpec.
  const spec = (image: string) => ({
    Name: service,
    Labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': run },
    TaskTemplate: {
      ContainerSpec: { Image: image, Command: ['sleep', '3600'], Mounts: [{ Type: 'volume' as const, Source: names.mountedVolume, Target: '/data' }] },
    },
    Mode: { Replicated: { Replicas: 0 } },
  });
  const created = engineApi.getService(((await engineApi.createService(spec(names.previousImage))) as unknown as { id: string }).id);
  const { Version } = await created.inspect();
  await created.update({ version: Version.Index, ...spec(names.currentImage) });
}, 120_000);

afterAll(async () => {
  const quiet = (...args: string[]) => {
    try {
      execFileSync(DOCKER, args, { stdio: 'ignore' });
    } catch {
      // already gone
    }
  };
  quiet('service', 'rm', service);
  for (const c of [names.seed, names.workloadContainer, names.strayContainer, names.strayContainer2]) quiet('rm', '-f', c);
  for (const i of [names.previousImage, names.currentImage, names.unusedImage]) quiet('rmi', i);
  for (const v of [names.mountedVolume, names.keptVolume, names.appVolume, names.freeVolume]) quiet('volume', 'rm', v);
}, 60_000);

describe('host cleanup on the real engine', () => {
  it('cleanAll: stopped containers and unused images go; a stopped workload, its images and every volume stay', async () => {
    const control = new HostCleanupControl({ engine, slots: new CommandScheduler({ maxSlots: 1, run: async () => {} }), log });
    const reply = await control.handle(request({ images: true, stoppedContainers: true, buildCache: true }));
    expect(reply.error).toBe('');
    const result = reply.hostCleanup!;
    expect(result.removedContainers.sort()).toEqual([names.seed, names.strayContainer].sort());
    expect(exists('container', names.workloadContainer)).toBe(true);
    expect(exists('image', names.unusedImage)).toBe(false);
    expect(result.removedImages).toHaveLength(1);
    expect(Number(result.spaceFreed)).toBeGreaterThan(0);
    // Named by the service's current and previous spec: a rollback still finds its image.
    expect(exists('image', names.currentImage)).toBe(true);
    expect(exists('image', names.previousImage)).toBe(true);
    expect(result.removedVolumes).toEqual([]);
    for (const v of [names.mountedVolume, names.keptVolume, names.appVolume, names.freeVolume]) expect(exists('volume', v)).toBe(true);
  }, 60_000);

  it('cleanUnusedVolumes: removes only the volume no workload names', async () => {
    const control = new HostCleanupControl({ engine, slots: new CommandScheduler({ maxSlots: 1, run: async () => {} }), log });
    const reply = await control.handle(request({ volumes: true, keepVolumeNames: [names.keptVolume], keepAppNames: [appName] }));
    expect(reply.error).toBe('');
    expect(reply.hostCleanup!.removedVolumes).toEqual([names.freeVolume]);
    expect(exists('volume', names.freeVolume)).toBe(false);
    for (const v of [names.mountedVolume, names.keptVolume, names.appVolume]) expect(exists('volume', v)).toBe(true);
  }, 60_000);

  it('waits while a deploy runs, and no deploy starts while it cleans', async () => {
    docker('create', '--name', names.strayContainer2, '--label', LABEL, 'busybox:latest', 'true');
    let endDeploy!: () => void;
    const started: string[] = [];
    const scheduler = new CommandScheduler({
      maxSlots: 2,
      run: (c) =>
        new Promise<void>((resolve) => {
          started.push(c.id);
          if (c.id === 'deploy-1') endDeploy = resolve;
          else resolve();
        }),
    });
    const calls: string[] = [];
    const watched = new Proxy(engine, {
      get: (target, key) => {
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (...args: unknown[]) => (calls.push(String(key)), value.apply(target, args)) : value;
      },
    });
    const control = new HostCleanupControl({ engine: watched, slots: scheduler, log });
    scheduler.enqueue({ id: 'deploy-1', workloadKey: 'application:a', takesSlot: true });
    await new Promise((r) => setImmediate(r));
    const cleaning = control.handle(request({ stoppedContainers: true }));
    scheduler.enqueue({ id: 'deploy-2', workloadKey: 'application:b', takesSlot: true });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([]);
    expect(started).toEqual(['deploy-1']);
    expect(exists('container', names.strayContainer2)).toBe(true);
    endDeploy();
    const reply = await cleaning;
    expect(reply.error).toBe('');
    expect(reply.hostCleanup!.removedContainers).toEqual([names.strayContainer2]);
    await scheduler.idle();
    expect(started).toEqual(['deploy-1', 'deploy-2']);
  }, 60_000);

  it('is answered on the control subject by an agent given a cleanup engine', async () => {
    const nc: NatsConnection = await connect({ servers: inject('natsUrl') });
    await ensureCommandStream(nc);
    const reportServer = await startReportServer();
    const serverId = `srv-cl-${run}`;
    const folder = mkdtempSync(join(tmpdir(), 'skiff-cl-'));
    const { stop } = await startTestAgent({
      serverId,
      nc,
      driver: new DockerodeDriver(),
      cleanup: engine,
      journalDir: join(folder, 'agent'),
      reportTarget: reportServer.target,
      credential: `cred-${run}`,
      log,
      maxConcurrentDeploys: 1,
    });
    try {
      const reply = await requestControl(nc, serverId, { request: { $case: 'hostCleanup', value: request({ onlyLabel: 'no-equals-sign' }) } });
      expect(reply.error).toMatch(/only_label must be key=value/);
      const done = await requestControl(nc, serverId, { request: { $case: 'hostCleanup', value: request({ stoppedContainers: true }) } }, { timeoutMs: 30_000 });
      expect(done.error).toBe('');
      expect(done.hostCleanup).toMatchObject({ removedContainers: [], removedImages: [], removedVolumes: [] });
    } finally {
      await stop();
      await reportServer.stop();
      await nc.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 90_000);
});
