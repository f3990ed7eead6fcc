// The build cap on the real engine: BuildKit's steps run in the engine's `docker/buildkit`
// cgroup, which this machine's engine shares with other tests. The cap is set for one
// short build and the previous limits are written back afterwards; 48 MiB leaves room for
// the small steps other builds run meanwhile, while the step here allocates 200 MiB.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_CGROUP } from '../config.js';
import { BuildCap } from './build-cap.js';
import { runDockerBuild } from './docker-build.js';
import { BuildError } from './errors.js';
import { dockerCliOf, type BuildSettings } from './settings.js';

const run = randomBytes(4).toString('hex');
const dockerCli = dockerCliOf(null);
const CGROUP_FILES = [
  `/sys/fs/cgroup/memory/${DEFAULT_BUILD_CGROUP}/memory.memsw.limit_in_bytes`,
  `/sys/fs/cgroup/memory/${DEFAULT_BUILD_CGROUP}/memory.limit_in_bytes`,
  `/sys/fs/cgroup/cpu/${DEFAULT_BUILD_CGROUP}/cpu.cfs_quota_us`,
  `/sys/fs/cgroup/${DEFAULT_BUILD_CGROUP}/memory.max`,
  `/sys/fs/cgroup/${DEFAULT_BUILD_CGROUP}/cpu.max`,
];
const saved = new Map<string, string>();
const images: string[] = [];
let dir: string;

async function restoreLimits(): Promise<void> {
  // Memory before memory+swap when raising back (v1 wants memsw >= memory).
  for (const file of [...saved.keys()].sort((a, b) => Number(b.includes('memsw')) - Number(a.includes('memsw')))) {
    const value = saved.get(file)!;
    await writeFile(file, value.startsWith('max') || value.includes(' ') ? value : value === '9223372036854771712' ? '-1' : value).catch(() => {});
  }
}

beforeAll(async () => {
  for (const file of CGROUP_FILES) if (existsSync(file)) saved.set(file, (await readFile(file, 'utf8')).trim());
  dir = await mkdtemp(join(tmpdir(), 'skiff-build-cap-'));
});

afterAll(async () => {
  await restoreLimits();
  for (const image of images) await new Promise((resolve) => execFile(dockerCli, ['image', 'rm', '-f', image], resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function capped(memoryBytes: number, step: string) {
  const settings: BuildSettings = {
    dataDir: dir,
    dockerCli,
    dockerSocket: '/var/run/docker.sock',
    timeoutMs: 120_000,
    cap: new BuildCap({ cpus: 1, memoryBytes, cgroup: DEFAULT_BUILD_CGROUP }),
  };
  const context = await mkdtemp(join(dir, 'ctx-'));
  await writeFile(join(context, 'Dockerfile'), `FROM busybox:latest\nRUN ${step} && echo ${run}-${images.length}\n`);
  const image = `skiff-build-cap-${run}:b${images.length}`;
  images.push(image);
  const lines: string[] = [];
  const error = await runDockerBuild({
    settings,
    file: join(context, 'Dockerfile'),
    context,
    target: '',
    buildArgs: {},
    buildSecrets: {},
    labels: { 'skiff.test': 'build-cap' },
    image,
    privateDir: context,
    signal: new AbortController().signal,
    deadline: Date.now() + 120_000,
    log: async (...l) => void lines.push(...l),
  }).then(
    () => null,
    (err: unknown) => err,
  );
  await restoreLimits();
  return { error, lines };
}

describe('the build cap', () => {
  it('ends a build that uses more memory than the cap in error, with the cap as its reason', async () => {
    const { error, lines } = await capped(48 * 1024 ** 2, 'dd if=/dev/zero of=/dev/null bs=200M count=1');
    expect(error).toBeInstanceOf(BuildError);
    expect((error as Error).message).toBe("the build used more than 48 MiB of memory (the server's build cap, SKIFF_BUILD_MEMORY)");
    expect(lines).toContain('Build cap of this server (all its builds together): 48 MiB of memory and 1 CPU');
  });

  it('lets a build within the cap finish, and keeps the builder\'s own reason for other failures', async () => {
    expect((await capped(256 * 1024 ** 2, 'dd if=/dev/zero of=/dev/null bs=8M count=1')).error).toBeNull();
    const failed = await capped(256 * 1024 ** 2, 'exit 3');
    expect(failed.error).toBeInstanceOf(BuildError);
    expect((failed.error as Error).message).toMatch(/^the build failed: .*exit code: 3/);
  });
});
