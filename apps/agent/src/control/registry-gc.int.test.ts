// The server registry's garbage collection (registry-gc.ts) on the real engine: a registry:2
// container labelled as the server registry's task (named with this run's id, on a free
// loopback port) holds two pushed images; the one whose local image is gone loses its tag and
// its layers, the other stays, and a second run removes nothing. The container, the images
// and the configuration directory are removed at the end.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@skiff/testing';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeCleanupEngine } from '../docker/dockerode-cleanup.js';
import { collectRegistry } from './registry-gc.js';

const run = randomBytes(3).toString('hex');
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const engine = new DockerodeCleanupEngine(docker);
const name = `skiff-gc-${run}`;
const dir = mkdtempSync(join(tmpdir(), 'skiff-registry-gc-'));
const kept = `${name}-a:keep`;
const gone = `${name}-b:gone`;
let address = '';
const cli = (args: string[], input?: string) => execFileSync('/usr/bin/docker', args, { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();

beforeAll(async () => {
  writeFileSync(
    join(dir, 'config.yml'),
    JSON.stringify({ version: 0.1, log: { level: 'warn' }, storage: { filesystem: { rootdirectory: '/var/lib/registry' }, delete: { enabled: true } }, http: { addr: ':5000' } }),
  );
  address = `127.0.0.1:${await freePort()}`;
  cli([
    'run', '-d', '--name', name,
    '--label', 'skiff.role=server-registry', '--label', 'com.docker.swarm.service.name=skiff-registry',
    '-p', `${address}:5000`, '-v', `${dir}/config.yml:/run/secrets/config.yml:ro`,
    'registry:2', 'serve', '/run/secrets/config.yml',
  ]);
  await waitFor(async () => ((await fetch(`http://${address}/v2/`).catch(() => null))?.ok ? true : null), { timeoutMs: 20_000, intervalMs: 200, what: 'the registry' });
  for (const image of [kept, gone]) {
    // A megabyte of its own, so the collection frees something measurable.
    cli(['build', '-q', '-t', image, '-'], `FROM busybox:latest\nRUN dd if=/dev/urandom of=/blob bs=1024 count=1024 2>/dev/null && echo ${image} > /name\n`);
    cli(['tag', image, `${address}/${image}`]);
    cli(['push', `${address}/${image}`]);
  }
  cli(['rmi', gone, `${address}/${gone}`]);
}, 120_000);

afterAll(async () => {
  await docker.getContainer(name).remove({ force: true, v: true }).catch(() => {});
  for (const image of [kept, `${address}/${kept}`, gone, `${address}/${gone}`]) await docker.getImage(image).remove().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const tags = async (repo: string) => ((await (await fetch(`http://${address}/v2/${repo}/tags/list`)).json()) as { tags?: string[] | null }).tags ?? [];

describe('collectRegistry', () => {
  it('deletes the tags of images gone from this engine and collects their layers', async () => {
    const images = (await engine.images()).filter((i) => i.tags.some((t) => t.startsWith(name)));
    const collected = await collectRegistry(engine, images, []);
    expect(collected.removedTags).toEqual([`skiff-registry/${gone}`]);
    expect(collected.spaceFreed).toBeGreaterThan(1024 * 1024);
    expect(await tags(`${name}-b`)).toEqual([]);
    expect(await tags(`${name}-a`)).toEqual(['keep']);
    const manifest = await fetch(`http://${address}/v2/${name}-a/manifests/keep`, { headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } });
    expect(manifest.status).toBe(200);

    expect(await collectRegistry(engine, images, [])).toEqual({ removedTags: [], spaceFreed: 0 });
  }, 60_000);

  it('keeps a tag a service names, though its local image is gone', async () => {
    cli(['rmi', kept, `${address}/${kept}`]);
    const collected = await collectRegistry(engine, [], [`127.0.0.1:5031/${kept}@sha256:${'0'.repeat(64)}`]);
    expect(collected.removedTags).toEqual([]);
    expect(await tags(`${name}-a`)).toEqual(['keep']);
  }, 60_000);
});
