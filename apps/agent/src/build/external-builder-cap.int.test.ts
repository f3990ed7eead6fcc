// External builders under the build cap, on this machine's real cgroups: no nixpacks, railpack
// or pack is installed here, so a fake `nixpacks` on PATH stands for one. It allocates memory
// itself (dd's buffer) and reports which cgroups it runs in. The engine's `docker/buildkit`
// cgroup is shared with other tests: the cap is set for one short build and the previous
// limits are written back afterwards.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildType } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_CGROUP } from '../config.js';
import { BuildCap } from './build-cap.js';
import { BuildError } from './errors.js';
import { runExternalBuild } from './external-builders.js';
import { dockerCliOf } from './settings.js';

const run = randomBytes(4).toString('hex');
const CGROUP_FILES = [
  `/sys/fs/cgroup/memory/${DEFAULT_BUILD_CGROUP}/memory.memsw.limit_in_bytes`,
  `/sys/fs/cgroup/memory/${DEFAULT_BUILD_CGROUP}/memory.limit_in_bytes`,
  `/sys/fs/cgroup/cpu/${DEFAULT_BUILD_CGROUP}/cpu.cfs_quota_us`,
  `/sys/fs/cgroup/${DEFAULT_BUILD_CGROUP}/memory.max`,
  `/sys/fs/cgroup/${DEFAULT_BUILD_CGROUP}/cpu.max`,
];
const saved = new Map<string, string>();
let dir: string;
let bin: string;

async function restoreLimits(): Promise<void> {
  for (const file of [...saved.keys()].sort((a, b) => Number(b.includes('memsw')) - Number(a.includes('memsw')))) {
    const value = saved.get(file)!;
    await writeFile(file, value.startsWith('max') || value.includes(' ') ? value : value === '9223372036854771712' ? '-1' : value).catch(() => {});
  }
}

beforeAll(async () => {
  for (const file of CGROUP_FILES) if (existsSync(file)) saved.set(file, (await readFile(file, 'utf8')).trim());
  dir = await mkdtemp(join(tmpdir(), 'skiff-external-cap-'));
  bin = join(dir, 'bin');
  await mkdir(bin);
  // Allocates $FAKE_MB MiB in one buffer, after printing its cgroups.
  await writeFile(
    join(bin, 'nixpacks'),
    '#!/bin/sh\nset -e\ngrep -E ":(memory|cpu,cpuacct|cpu):|^0::" /proc/self/cgroup | sed "s/^/cgroup /"\ndd if=/dev/zero of=/dev/null bs=${FAKE_MB}M count=1 2>/dev/null\necho built\n',
  );
  await chmod(join(bin, 'nixpacks'), 0o755);
});

afterAll(async () => {
  await restoreLimits();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function build(memoryBytes: number, megabytes: number) {
  const lines: string[] = [];
  const error = await runExternalBuild({
    type: BuildType.BUILD_TYPE_PACK_ONE,
    dir,
    image: `skiff-external-cap-${run}:latest`,
    buildArgs: { FAKE_MB: String(megabytes) },
    hasSecrets: false,
    builderVersion: '',
    settings: {
      dataDir: dir,
      dockerCli: dockerCliOf(null),
      dockerSocket: '/var/run/docker.sock',
      timeoutMs: 60_000,
      path: `${bin}:/usr/bin:/bin`,
      cap: new BuildCap({ cpus: 1, memoryBytes, cgroup: DEFAULT_BUILD_CGROUP }),
    },
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    log: async (...l) => void lines.push(...l),
  }).then(
    () => null,
    (err: unknown) => err,
  );
  await restoreLimits();
  return { error, lines };
}

describe('an external builder under the build cap', () => {
  it('runs the builder program in the cap\'s cgroup from its start, and lets a build within the cap finish', async () => {
    const { error, lines } = await build(256 * 1024 ** 2, 8);
    expect(error).toBeNull();
    expect(lines).toContain('Build cap of this server (all its builds together): 256 MiB of memory and 1 CPU');
    // cgroup v1: the memory and cpu hierarchies; v2: the unified one.
    const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
    const cgroups = lines.filter((l) => l.startsWith('cgroup ') && l.startsWith('cgroup 0::') === v2);
    expect(cgroups.length).toBe(v2 ? 1 : 2);
    for (const line of cgroups) expect(line).toMatch(new RegExp(`:/${DEFAULT_BUILD_CGROUP}/skiff-builders$`));
    expect(lines).toContain('built');
  });

  it('ends a builder that uses more memory than the cap in error, with the cap as its reason', async () => {
    const { error, lines } = await build(64 * 1024 ** 2, 200);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as Error).message).toBe("the build used more than 64 MiB of memory (the server's build cap, SKIFF_BUILD_MEMORY)");
    expect(lines).not.toContain('built');
  });

  it('keeps the builder\'s own reason when it fails for another reason', async () => {
    await writeFile(join(bin, 'nixpacks'), '#!/bin/sh\necho "no start command could be found" >&2\nexit 1\n');
    const { error } = await build(64 * 1024 ** 2, 1);
    expect((error as Error).message).toBe('nixpacks failed: no start command could be found');
  });
});
