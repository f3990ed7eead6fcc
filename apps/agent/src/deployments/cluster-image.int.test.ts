// Built images for the other nodes of a swarm (cluster-image.ts, docker/image-push.ts): a push
// to a docker-registry with basic auth on loopback (started by this file) answers the digest
// the registry serves the manifest under; a wrong login fails with the registry's reason; a
// swarm of one node leaves the spec alone, one of several gets the pushed image by digest, or
// without a registry a constraint to this node. The tags and the registry of this run are
// removed afterwards. Two real nodes: apps/control-plane/src/cluster.e2e.test.ts.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { startTestRegistry, type TestRegistry } from '@skiff/testing';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import type { ServiceSpec } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { DockerodeSwarmNodes, type NodeSummary } from '../docker/swarm-nodes.js';
import { shareBuiltImage } from './cluster-image.js';

const run = randomBytes(3).toString('hex');
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });
const local = `skiff-ci-${run}:dep1`;
let registry: TestRegistry;
const tags = new Set<string>([local]);

const spec = (image: string): ServiceSpec => ({
  Name: `ci-${run}`,
  Labels: { 'skiff.managed': 'true' },
  TaskTemplate: { ContainerSpec: { Image: image }, Placement: { Constraints: ['node.role==manager'] } },
});
const node = (id: string, self: boolean): NodeSummary => ({
  id,
  hostname: `h-${id.slice(0, 3)}`,
  role: self ? 'manager' : 'worker',
  availability: 'active',
  state: 'ready',
  address: '',
  leader: self,
  engineVersion: '',
  labels: {},
  self,
});
const twoNodes = { list: async () => [node('a'.repeat(25), true), node('b'.repeat(25), false)] };

beforeAll(async () => {
  registry = await startTestRegistry();
  execFileSync('/usr/bin/docker', ['tag', 'busybox:latest', local]);
}, 60_000);

afterAll(async () => {
  for (const tag of tags) await docker.getImage(tag).remove({ noprune: true }).catch(() => undefined);
  await registry?.stop();
});

describe('pushImage', () => {
  it('tags and pushes a local image, answering the digest the registry serves it under', async () => {
    const target = `${registry.address}/skiff-ci-${run}:dep1`;
    tags.add(target);
    const auth = { username: registry.username, password: registry.password, serveraddress: registry.address };
    const digest = await driver.pushImage(local, target, { registryAuth: auth });
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const manifest = await fetch(`http://${registry.address}/v2/skiff-ci-${run}/manifests/dep1`, {
      method: 'HEAD',
      headers: {
        authorization: `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString('base64')}`,
        accept: 'application/vnd.docker.distribution.manifest.v2+json',
      },
    });
    expect(manifest.headers.get('docker-content-digest')).toBe(digest);
  });

  it("fails with the registry's reason when the login is wrong", async () => {
    const target = `${registry.address}/skiff-ci-${run}:denied`;
    tags.add(target);
    const auth = { username: registry.username, password: 'not-the-password', serveraddress: registry.address };
    const err = await driver.pushImage(local, target, { registryAuth: auth }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DockerError);
    expect((err as DockerError).engineMessage).toMatch(/unauthorized|authentication required|no basic auth/i);
  });
});

describe('shareBuiltImage', () => {
  const push = (source: string, target: string, options: Parameters<typeof driver.pushImage>[2]) => driver.pushImage(source, target, options);

  it('leaves the spec alone on a swarm of one node (this engine)', async () => {
    const shared = await shareBuiltImage({ nodes: new DockerodeSwarmNodes(docker), push, registry: { address: registry.address } }, spec(local), local, {});
    expect(shared).toEqual({ spec: spec(local), lines: [] });
  });

  it("on several nodes, names the image pushed to the cluster registry by digest, with the registry's login", async () => {
    const registryConfig = { address: registry.address, username: registry.username, password: registry.password };
    tags.add(`${registry.address}/${local}`);
    const shared = await shareBuiltImage({ nodes: twoNodes, push, registry: registryConfig }, spec(local), local, {});
    expect(shared.spec.TaskTemplate.ContainerSpec.Image).toMatch(new RegExp(`^${registry.address}/skiff-ci-${run}:dep1@sha256:[0-9a-f]{64}$`));
    expect(shared.spec.TaskTemplate.Placement).toEqual({ Constraints: ['node.role==manager'] });
    expect(shared.registryAuth).toEqual({ username: registry.username, password: registry.password, serveraddress: registry.address });
    expect(shared.lines.join('\n')).toContain('2 nodes');
    expect(shared.lines.join('\n')).not.toContain(registry.password);
  });

  it('on several nodes without a registry, keeps the service on this node and says so', async () => {
    const shared = await shareBuiltImage({ nodes: twoNodes, push }, spec(local), local, {});
    expect(shared.spec.TaskTemplate.ContainerSpec.Image).toBe(local);
    expect(shared.spec.TaskTemplate.Placement).toEqual({ Constraints: ['node.role==manager', `node.id==${'a'.repeat(25)}`] });
    expect(shared.lines).toEqual([expect.stringContaining('no cluster registry (SKIFF_CLUSTER_REGISTRY)')]);
  });
});
