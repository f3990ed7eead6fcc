// The throw-away containers of verifications and volume archives, on the real Docker Engine:
// each runs within its memory, CPU and process limits (the image and the archive are the
// user's), without a network, and is removed by `remove`. A verification's container blanks
// the workload labels its image carries (an image Compose built), so it is never taken for
// one of the stack's containers. The short-lived container that looks for an image's tools
// goes at once.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DatabaseEngine } from '@skiff/proto';
import Dockerode from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerodeScratchDatabases } from './scratch-databases.js';
import { DockerodeVolumeContainers } from './volume-containers.js';

const run = randomBytes(3).toString('hex');
const VOLUME = `limits-${run}-data`;
const SCRATCH = `skiff-verify-limits-${run}`;
const LABELLED_IMAGE = `skiff-verify-labelled-${run}:1`;
const SHELLLESS_IMAGE = `skiff-verify-shellless-${run}:1`;
const STUCK_SHELL_IMAGE = `skiff-verify-stuck-${run}:1`;
const engine = new Dockerode({ socketPath: '/var/run/docker.sock' });
const docker = (args: string[]) => new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout) => resolve({ ok: !err, out: stdout.trim() })));
const build = (tag: string, containerfile: string) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => {
    const child = execFile('docker', ['build', '-q', '-t', tag, '-'], (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}` }));
    child.stdin!.end(containerfile);
  });
const hostConfig = async (id: string) => (await engine.getContainer(id).inspect()).HostConfig;

afterAll(async () => {
  await docker(['rm', '-f', SCRATCH]);
  await docker(['volume', 'rm', '-f', VOLUME]);
  await docker(['rmi', LABELLED_IMAGE]);
  await docker(['rmi', SHELLLESS_IMAGE]);
  await docker(['rmi', STUCK_SHELL_IMAGE]);
});

describe('throw-away containers', () => {
  it('a verification’s container has memory, CPU and process limits and no network', async () => {
    const scratch = new DockerodeScratchDatabases(engine);
    const id = await scratch.start(SCRATCH, 'busybox:latest', DatabaseEngine.DATABASE_ENGINE_POSTGRES, 'shop');
    try {
      expect(await hostConfig(id)).toMatchObject({ NetworkMode: 'none', Memory: 1024 ** 3, NanoCpus: 1_000_000_000, PidsLimit: 512 });
    } finally {
      await scratch.remove(id);
    }
    expect((await docker(['ps', '-aq', '--filter', `name=${SCRATCH}`])).out).toBe('');
  }, 60_000);

  it('a verification’s container does not inherit the workload labels of its image', async () => {
    // An image as Compose labels what it builds for a project's service; no pull (busybox is local).
    const built = await build(LABELLED_IMAGE, `FROM busybox:latest\nLABEL com.docker.compose.project=shop com.docker.compose.service=db skiff.kind=compose other=kept\n`);
    expect(built.ok, built.out).toBe(true);
    const scratch = new DockerodeScratchDatabases(engine);
    const id = await scratch.start(SCRATCH, LABELLED_IMAGE, DatabaseEngine.DATABASE_ENGINE_POSTGRES, 'shop');
    try {
      const labels = (await engine.getContainer(id).inspect()).Config.Labels;
      expect(labels).toMatchObject({ 'com.docker.compose.project': '', 'com.docker.compose.service': '', 'skiff.kind': '', other: 'kept', 'skiff.verify': SCRATCH });
      expect((await docker(['ps', '-aq', '--filter', 'label=com.docker.compose.project=shop', '--filter', `name=${SCRATCH}`])).out).toBe('');
    } finally {
      await scratch.remove(id);
    }
  }, 60_000);

  it('an image’s missing tools are found by its sh in a container that goes at once; an image without sh lacks them all', async () => {
    const scratch = new DockerodeScratchDatabases(engine);
    expect(await scratch.missingTools(`${SCRATCH}-tools`, 'busybox:latest', ['pg_restore', 'sh', 'tar'])).toEqual(['pg_restore']);
    expect((await docker(['ps', '-aq', '--filter', `name=${SCRATCH}-tools`])).out).toBe('');
    // An image with nothing in it (no layers: no pull, no context).
    const built = await build(SHELLLESS_IMAGE, 'FROM scratch\nLABEL skiff.test=shell-less\n');
    expect(built.ok, built.out).toBe(true);
    expect(await scratch.missingTools(`${SCRATCH}-tools`, SHELLLESS_IMAGE, ['mariadb'])).toEqual(['sh', 'mariadb']);
    expect((await docker(['ps', '-aq', '--filter', `name=${SCRATCH}-tools`])).out).toBe('');
  }, 60_000);

  it('an image whose sh never answers the tools probe fails it within its time, and its container goes', async () => {
    const built = await build(STUCK_SHELL_IMAGE, `FROM busybox:latest\nRUN rm /bin/sh && printf '#!/bin/ash\\nexec sleep 3600\\n' > /bin/sh && chmod +x /bin/sh\n`);
    expect(built.ok, built.out).toBe(true);
    const scratch = new DockerodeScratchDatabases(engine, { probeTimeoutMs: 2_000 });
    const started = Date.now();
    await expect(scratch.missingTools(`${SCRATCH}-tools`, STUCK_SHELL_IMAGE, ['pg_restore'])).rejects.toThrow(/did not look for pg_restore within 2 s/);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await docker(['ps', '-aq', '--filter', `name=${SCRATCH}-tools`])).out).toBe('');
  }, 60_000);

  it('a volume tool’s container has memory, CPU and process limits and no network', async () => {
    expect((await docker(['volume', 'create', VOLUME])).ok).toBe(true);
    const volumes = new DockerodeVolumeContainers(engine);
    const id = await volumes.start(VOLUME, true, `limits-${run}`);
    try {
      expect(await hostConfig(id)).toMatchObject({ NetworkMode: 'none', Memory: 256 * 1024 ** 2, NanoCpus: 1_000_000_000, PidsLimit: 64 });
    } finally {
      await volumes.remove(id);
    }
    expect((await docker(['ps', '-aq', '--filter', `label=skiff.volume-tool=limits-${run}`])).out).toBe('');
  }, 60_000);
});
