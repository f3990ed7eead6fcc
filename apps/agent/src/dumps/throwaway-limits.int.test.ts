// The throw-away containers of verifications and volume archives, on the real Docker Engine:
// each runs within its memory, CPU and process limits (the image and the archive are the
// user's), without a network, and is removed by `remove`.
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
const engine = new Dockerode({ socketPath: '/var/run/docker.sock' });
const docker = (args: string[]) => new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout) => resolve({ ok: !err, out: stdout.trim() })));
const hostConfig = async (id: string) => (await engine.getContainer(id).inspect()).HostConfig;

afterAll(async () => {
  await docker(['rm', '-f', SCRATCH]);
  await docker(['volume', 'rm', '-f', VOLUME]);
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
