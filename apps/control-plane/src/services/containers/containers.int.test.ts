// Which containers a caller sees (real Postgres): the agent's answer is given in its wire
// format (ControlReply), since the agent itself runs in containers.e2e.test.ts; here the
// filter by organization, member grants and servers, and the agent's failures.
import { ContainerOperation, type ControlReply, type ControlRequest } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoAgentControl } from '../../agents/outbound/control-client.js';
import { hashToken } from '../../crypto/tokens.js';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { ContainerRequests } from './container-requests.js';
import { ContainerService } from './containers.js';

let t: TestPlatform;
let ids: { app: string; cache: string; stack: string; foreignApp: string };
const asked: ControlRequest[] = [];
let listed: unknown[] = [];

const item = (name: string, kind: string, id: string, extra: Record<string, string> = {}) => ({
  containerId: `${name}-id`,
  name,
  image: 'busybox:latest',
  state: 'running',
  status: 'Up 1 minute',
  created: '2026-01-01T00:00:00.000Z',
  ports: [],
  labels: { 'skiff.managed': 'true', 'skiff.kind': kind, 'skiff.id': id, ...extra },
  serviceName: null,
  node: null,
});

const agent = {
  async request(_serverId: string, request: ControlRequest): Promise<ControlReply> {
    asked.push(request);
    const value = request.request?.$case === 'container' ? request.request.value : null;
    if (value?.operation === ContainerOperation.CONTAINER_OPERATION_LIST) return { commandIds: [], error: '', container: { resultJson: JSON.stringify(listed), notFound: false } };
    const found = (listed as Array<ReturnType<typeof item>>).find((c) => c.containerId === value?.containerId || c.name === value?.containerId);
    if (!found) return { commandIds: [], error: 'no Skiff container', container: { resultJson: '', notFound: true } };
    if (value?.operation === ContainerOperation.CONTAINER_OPERATION_INSPECT) {
      return { commandIds: [], error: '', container: { resultJson: JSON.stringify({ Id: found.containerId, Config: { Labels: found.labels, Env: ['A=1', 'B=two=2'] } }), notFound: false } };
    }
    return { commandIds: [], error: '', container: { resultJson: '{}', notFound: false } };
  },
};

let service: ContainerService;
const principal = (key: string) => t.platform.identity.principalByKeyHash(hashToken(key));

beforeAll(async () => {
  t = await startTestPlatform();
  service = new ContainerService(t.db, new ContainerRequests(agent));
  const env = (await t.call('project.create', { name: 'containers' })).body.environments[0].environmentId;
  ids = {
    app: (await t.call('application.create', { name: 'web', appName: 'ct-web', environmentId: env })).body.applicationId,
    cache: (await t.call('cache.create', { name: 'kv', appName: 'ct-kv', environmentId: env, databasePassword: 'kv-password-1' })).body.cacheId,
    stack: (await t.call('compose.create', { name: 'st', appName: 'ct-stack', environmentId: env, composeType: 'stack' })).body.composeId,
    foreignApp: 'app_of_another_organization',
  };
  listed = [
    item('ct-web.1.abc', 'application', ids.app, { 'com.docker.swarm.service.name': 'ct-web' }),
    item('ct-kv.1.def', 'cache', ids.cache, { 'com.docker.swarm.service.name': 'ct-kv' }),
    item('ct-stack_db.1.ghi', 'compose', ids.stack, { 'com.docker.stack.namespace': 'ct-stack' }),
    item('ct-web-foreign', 'application', ids.foreignApp),
    item('skiff-proxy', 'proxy', 'local'),
  ];
});
afterAll(() => t?.close());

describe('ContainerService', () => {
  it("lists the containers of the organization's workloads of every kind, none of another's", async () => {
    const p = await principal(t.ownerKey);
    expect(p).toBeTruthy();
    const names = (await service.getContainers(p!, {})).map((c) => c.name).sort();
    expect(names).toEqual(['ct-kv.1.def', 'ct-stack_db.1.ghi', 'ct-web.1.abc']);
    expect((await service.getStackContainersByAppName(p!, { appName: 'ct-stack' })).map((c) => c.name)).toEqual(['ct-stack_db.1.ghi']);
    expect((await service.getContainersByAppNameMatch(p!, { appName: 'ct-web' })).map((c) => c.name)).toEqual(['ct-web.1.abc']);
    await expect(service.restartContainer(p!, { containerId: 'ct-web-foreign' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'No such container' });
    await expect(service.getConfig(p!, { containerId: 'skiff-proxy' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await service.getConfig(p!, { containerId: 'ct-web.1.abc' })).Config).toMatchObject({ Env: ['A=<redacted>', 'B=<redacted>'] });
    asked.length = 0;
    expect(await service.restartContainer(p!, { containerId: 'ct-web.1.abc' })).toEqual({});
    expect(asked.at(-1)?.request).toMatchObject({ value: { operation: ContainerOperation.CONTAINER_OPERATION_RESTART, containerId: 'ct-web.1.abc-id', expectKind: 'application', expectId: ids.app } });
  });

  it('shows a member only the services granted', async () => {
    const member = await addMember(t, 'member@containers.test');
    const p = await principal(member.key);
    expect(await service.getContainers(p!, {})).toEqual([]);
  });

  it('names the server when its agent cannot be reached', async () => {
    const offline = new ContainerService(t.db, new ContainerRequests(new NoAgentControl()));
    const p = await principal(t.ownerKey);
    await expect(offline.getContainers(p!, { serverId: 'srv_unknown' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'No such server' });
    await expect(offline.getContainers(p!, {})).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('server local (the platform host)') });
  });
});
