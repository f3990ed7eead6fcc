// A host port belongs to one workload of a server, whatever its organization: Swarm would start
// a second publisher's waiting task as soon as the first one stops, and hand it the port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let other: string;
const ports = (port: number, protocol?: string) => ({ Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host', ...(protocol ? { Protocol: protocol } : {}) }] });

async function environmentOf(key?: string) {
  return (await t.call('project.create', { name: 'ports' }, { key })).body.environments[0].environmentId as string;
}

beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite' });
  const org = (await t.call('organization.create', { name: 'other tenant' })).body;
  other = (await t.call('user.createApiKey', { name: 'other', metadata: { organizationId: org.organizationId } })).body.key;
});
afterAll(() => t?.close());

describe('a published host port', () => {
  it('is refused to every other workload of the server, of any organization, and changes nothing', async () => {
    const mine = (await t.call('application.create', { name: 'web', appName: 'web', environmentId: await environmentOf() })).body.applicationId;
    expect((await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(28081) })).status).toBe(200);

    const env = await environmentOf(other);
    const theirs = (await t.call('application.create', { name: 'evil', appName: 'evil', environmentId: env }, { key: other })).body.applicationId;
    const app = await t.call('application.update', { applicationId: theirs, endpointSpecCluster: ports(28081) }, { key: other });
    expect(app.status).toBe(400);
    expect(app.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28081 is already published on this server' }]);
    expect((await t.call('application.one', { applicationId: theirs }, { key: other })).body.endpointSpecCluster).toBeNull();

    const cacheId = (await t.call('cache.create', { name: 'c', appName: 'evil-cache', databasePassword: 'correct-horse-battery', environmentId: env }, { key: other })).body.cacheId;
    const cache = await t.call('cache.saveExternalPort', { cacheId, externalPort: 28081 }, { key: other });
    expect(cache.body.issues).toEqual([{ path: ['externalPort'], message: 'port 28081 is already published on this server' }]);
    const cacheSpec = await t.call('cache.update', { cacheId, endpointSpecCluster: ports(28081) }, { key: other });
    expect(cacheSpec.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28081 is already published on this server' }]);

    const dbAId = (await t.call('dbA.create', { name: 'd', appName: 'evil-db', environmentId: env }, { key: other })).body.dbAId;
    expect((await t.call('dbA.saveExternalPort', { dbAId, externalPort: 16543 }, { key: other })).status).toBe(200);
    // …and the other way round: an application cannot take a database's port.
    const taken = await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(16543) });
    expect(taken.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 16543 is already published on this server' }]);
  });

  it('stays its own workload\'s to publish again, and another protocol\'s port of that number is free', async () => {
    const env = await environmentOf();
    const app = (await t.call('application.create', { name: 'dns', appName: 'dns', environmentId: env })).body.applicationId;
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28053) })).status).toBe(200);
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28053) })).status).toBe(200);
    const udp = (await t.call('application.create', { name: 'dns-udp', appName: 'dns-udp', environmentId: env })).body.applicationId;
    expect((await t.call('application.update', { applicationId: udp, endpointSpecCluster: ports(28053, 'udp') })).status).toBe(200);
  });

  it("is refused when it is one Skiff publishes itself (the proxy's, the cluster registry's), naming it", async () => {
    const env = await environmentOf(other);
    const app = (await t.call('application.create', { name: 'grab', appName: 'grab', environmentId: env }, { key: other })).body.applicationId;
    for (const [port, protocol, what] of [
      [80, undefined, "port 80 is reserved for Skiff's proxy (HTTP)"],
      [443, undefined, "port 443 is reserved for Skiff's proxy (HTTPS)"],
      [443, 'udp', "port 443/udp is reserved for Skiff's proxy (HTTP/3)"],
      [5030, undefined, "port 5030 is reserved for Skiff's cluster registry"],
    ] as const) {
      const res = await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(port, protocol) }, { key: other });
      expect(res.body.issues, `${port}/${protocol}`).toEqual([{ path: ['endpointSpecCluster'], message: what }]);
    }
    expect((await t.call('application.one', { applicationId: app }, { key: other })).body.endpointSpecCluster).toBeNull();
    const cacheId = (await t.call('cache.create', { name: 'c', appName: 'grab-cache', databasePassword: 'correct-horse-battery', environmentId: env }, { key: other })).body.cacheId;
    const cache = await t.call('cache.saveExternalPort', { cacheId, externalPort: 443 }, { key: other });
    expect(cache.body.issues).toEqual([{ path: ['externalPort'], message: "port 443 is reserved for Skiff's proxy (HTTPS)" }]);
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(8443) }, { key: other })).status).toBe(200);
  });
});
