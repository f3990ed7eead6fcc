// Which registry a build for a swarm of several nodes goes to (cluster-image.ts): without a
// configured one, the server's own (pushed to its address, named on its mirrors' address
// with the login for them); when that cannot start, the service stays on this node and the
// log says why. The pushes themselves: cluster-image.int.test.ts and the cluster e2e tests.
import { describe, expect, it } from 'vitest';
import type { ServiceSpec } from '../docker/driver.js';
import type { NodeSummary } from '../docker/swarm-nodes.js';
import { shareBuiltImage } from './cluster-image.js';

const node = (id: string, self: boolean): NodeSummary => ({
  id,
  hostname: `h-${id[0]}`,
  role: self ? 'manager' : 'worker',
  availability: 'active',
  state: 'ready',
  address: '',
  leader: self,
  engineVersion: '',
  labels: {},
  self,
});
const nodes = { list: async () => [node('a'.repeat(25), true), node('b'.repeat(25), false)] };
const spec: ServiceSpec = { Name: 'web', Labels: { 'skiff.managed': 'true' }, TaskTemplate: { ContainerSpec: { Image: 'web:dep1' } } };
const digest = `sha256:${'f'.repeat(64)}`;

describe('shareBuiltImage without a configured registry', () => {
  it("pushes to the server's own registry and names the image on its mirrors by digest", async () => {
    const pushes: unknown[] = [];
    const own = { address: '127.0.0.1:5030', pullAddress: '127.0.0.1:5031', username: 'skiff', password: 'pw' };
    const shared = await shareBuiltImage(
      {
        nodes,
        serverRegistry: { ensure: async () => own },
        push: async (source, target, options) => {
          pushes.push([source, target, options.registryAuth]);
          return digest;
        },
      },
      spec,
      'web:dep1',
      {},
    );
    expect(pushes).toEqual([['web:dep1', '127.0.0.1:5030/web:dep1', { username: 'skiff', password: 'pw', serveraddress: '127.0.0.1:5030' }]]);
    expect(shared.spec.TaskTemplate.ContainerSpec.Image).toBe(`127.0.0.1:5031/web:dep1@${digest}`);
    expect(shared.registryAuth).toEqual({ username: 'skiff', password: 'pw', serveraddress: '127.0.0.1:5031' });
    expect(shared.lines).toEqual([`Pushed the image to the server's own registry for the 2 nodes of this server's swarm: 127.0.0.1:5031/web:dep1@${digest}`]);
  });

  it('keeps the service on this node, saying why, when the server registry cannot start', async () => {
    const shared = await shareBuiltImage(
      {
        nodes,
        serverRegistry: { ensure: async () => Promise.reject(new Error('the image registry:2 could not be pulled')) },
        push: async () => Promise.reject(new Error('no push expected')),
      },
      spec,
      'web:dep1',
      {},
    );
    expect(shared.spec.TaskTemplate.Placement).toEqual({ Constraints: [`node.id==${'a'.repeat(25)}`] });
    expect(shared.lines).toEqual([expect.stringContaining('the server registry could not start (the image registry:2 could not be pulled)')]);
  });
});
