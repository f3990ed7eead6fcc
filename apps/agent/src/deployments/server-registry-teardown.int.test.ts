// The server registry's leftovers removed on the real engine (this machine's single-node
// swarm), with stand-ins of unique names: a busybox service with a labelled secret, a volume
// and the overlay network, as the registry's services have.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerodeAt } from '../docker/lazy.js';
import { DockerodeRegistryObjects } from '../docker/registry-objects.js';
import { pruneRegistrySecrets, removeServerRegistry, type RegistryNames } from './server-registry-teardown.js';

const run = randomBytes(4).toString('hex');
const prefix = `skiff-regtest-${run}-`;
const labels = { 'skiff.managed': 'true', 'skiff.role': 'server-registry' };
const names: RegistryNames = { services: [`${prefix}svc`], network: `${prefix}net`, volumes: [`${prefix}data`], secretPrefix: prefix };
let docker: Awaited<ReturnType<typeof dockerodeAt>>;
let objects: DockerodeRegistryObjects;

const secret = (name: string) => docker.createSecret({ Name: name, Labels: labels, Data: Buffer.from(name).toString('base64') }) as Promise<{ id: string }>;
const secretsLeft = async () => ((await docker.listSecrets()) as Array<{ Spec: { Name: string } }>).map((s) => s.Spec.Name).filter((n) => n.startsWith(prefix)).sort();

beforeAll(async () => {
  docker = await dockerodeAt('/var/run/docker.sock', 60_000);
  objects = new DockerodeRegistryObjects(docker);
  await docker.createNetwork({ Name: names.network, Driver: 'overlay', Attachable: true, Labels: { 'skiff.managed': 'true' } });
  const used = await secret(`${prefix}config-new`);
  await secret(`${prefix}config-old`);
  await docker.createService({
    Name: names.services[0],
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: 'busybox:latest',
        Command: ['sleep', '600'],
        // An init that passes SIGTERM on: the removal does not wait out the 10 s stop grace period.
        Init: true,
        Mounts: [{ Type: 'volume', Source: names.volumes[0], Target: '/data', VolumeOptions: { Labels: labels } }],
        Secrets: [{ SecretID: used.id, SecretName: `${prefix}config-new`, File: { Name: 'config.yml', UID: '0', GID: '0', Mode: 0o400 } }],
      },
      Networks: [{ Target: names.network }],
    },
  } as never);
  // Running, so the volume exists and the network is in use.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const tasks = (await docker.listTasks({ filters: { service: [names.services[0]!] } })) as Array<{ Status: { State: string } }>;
    if (tasks.some((t) => t.Status.State === 'running')) break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}, 90_000);

afterAll(async () => {
  await docker.getService(names.services[0]!).remove().catch(() => {});
  for (let i = 0; i < 40; i++) {
    await docker.getVolume(names.volumes[0]!).remove().catch(() => {});
    await docker.getNetwork(names.network).remove().catch(() => {});
    const vols = ((await docker.listVolumes()).Volumes ?? []).some((v) => v.Name === names.volumes[0]);
    if (!vols) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const name of await secretsLeft()) await docker.getSecret(name).remove().catch(() => {});
});

describe('the server registry\'s leftovers', () => {
  it('prunes the secrets of an older configuration, and keeps the one in use', async () => {
    expect(await pruneRegistrySecrets(objects, [`${prefix}config-new`], names)).toEqual([`${prefix}config-old`]);
    expect(await secretsLeft()).toEqual([`${prefix}config-new`]);
  });

  it('removes the services, then the network, the volume and the secrets', async () => {
    const { removed, problems } = await removeServerRegistry(objects, { names, timeoutMs: 60_000 });
    expect(problems).toEqual([]);
    expect(removed.sort()).toEqual([`network ${names.network}`, `secret ${prefix}config-new`, `service ${names.services[0]}`, `volume ${names.volumes[0]}`].sort());
    expect(await secretsLeft()).toEqual([]);
    expect(((await docker.listVolumes()).Volumes ?? []).map((v) => v.Name)).not.toContain(names.volumes[0]);
    expect(((await docker.listNetworks()) as Array<{ Name: string }>).map((n) => n.Name)).not.toContain(names.network);
    // Nothing left: a second removal removes nothing and finds no problem.
    expect(await removeServerRegistry(objects, { names, timeoutMs: 1_000 })).toEqual({ removed: [], problems: [] });
  }, 90_000);
});
