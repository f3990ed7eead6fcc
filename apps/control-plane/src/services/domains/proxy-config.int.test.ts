import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ProxyRoute } from '@skiff/domain';
import { Command, CommandKind, CommandStatus, timestampToDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, addMember, startTestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { PROXY_DEADLINE_MS } from '../../agents/outbound/kinds/apply-proxy-config.js';
import { ProxyConfig, type ProxyInput } from './proxy-config.js';

const run = promisify(execFile);
const UPSTREAM = 'skiff-api.internal:4100';

let t: TestPlatform;
let env: string;
let dir: string;
const pem: Record<string, string> = {};
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-proxy-config-'));
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'shop.key', '-out', 'shop.pem', '-days', '30', '-subj', '/CN=shop.example.com', '-addext', 'subjectAltName=DNS:shop.example.com'], { cwd: dir });
  for (const name of ['shop.key', 'shop.pem']) pem[name] = await readFile(join(dir, name), 'utf8');
  t = await startTestPlatform({ platformUpstream: UPSTREAM });
  env = (await t.call('project.create', { name: 'proxied' })).body.environments[0].environmentId;
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ok = async (operation: string, input: Record<string, unknown>) => {
  const res = await t.call(operation, input);
  expect(res.status, `${operation}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

const createServer = async () => {
  const id = unique('srv');
  await t.db.insertInto('servers').values({ id, organizationId: t.organizationId, name: id, address: '93.184.216.34' }).execute();
  return id;
};

const createApp = async (serverId: string | null) =>
  (await ok('application.create', { name: unique('web'), environmentId: env, ...(serverId && { serverId }) })) as { applicationId: string; appName: string };

/** The ApplyProxyConfig commands of a server, oldest first, decoded from their sealed payloads. */
async function proxyCommands(serverId: string) {
  const outbox = new CommandOutbox(t.platform.secrets);
  const rows = await t.db
    .selectFrom('commands')
    .selectAll()
    .where('serverId', '=', serverId)
    .where('kind', '=', 'COMMAND_KIND_APPLY_PROXY_CONFIG')
    .orderBy('position')
    .execute();
  return rows.map((row) => {
    const command = Command.decode(outbox.open(row.payload));
    if (command.payload?.$case !== 'applyProxyConfig') throw new Error(`not a proxy command: ${command.payload?.$case}`);
    const { inputJson, revision } = command.payload.value;
    return { row, command, revision: Number(revision), input: JSON.parse(inputJson) as ProxyInput };
  });
}

const latest = async (serverId: string) => (await proxyCommands(serverId)).at(-1)!;
const routeOf = (input: ProxyInput, domainId: string) => input.routes.find((r: ProxyRoute) => r.domainId === domainId);

const refuses = async (operation: string, input: Record<string, unknown>, field: string) => {
  const res = await t.call(operation, input);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
  return res.body;
};

describe('proxy configuration commands', () => {
  it('queues the whole configuration of the server on domain.create, with increasing revisions', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const first = await ok('domain.create', { host: 'one.example.com', applicationId: app.applicationId, path: '/api', stripPath: true, port: 8080 });

    const [queued, ...rest] = await proxyCommands(serverId);
    expect(rest).toEqual([]);
    expect(queued!.command).toMatchObject({ serverId, kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG, workloadKey: `proxy:${serverId}` });
    expect(queued!.row).toMatchObject({ status: 'pending', workloadKey: `proxy:${serverId}` });
    const created = timestampToDate(queued!.command.createdAt!).getTime();
    expect(timestampToDate(queued!.command.deadline!).getTime() - created).toBe(PROXY_DEADLINE_MS);
    expect(queued!.revision).toBe(1);
    expect(queued!.input).toEqual({
      routes: [
        {
          domainId: first.domainId,
          host: 'one.example.com',
          path: '/api',
          port: 8080,
          https: false,
          certificateType: 'none',
          customCertResolver: null,
          customEntrypoint: null,
          internalPath: '/',
          stripPath: true,
          middlewares: null,
          forwardAuthEnabled: false,
          enabled: true,
          upstream: app.appName,
          basicAuth: [],
          certificateId: null,
        },
      ],
      certificates: [],
      platform: null,
      middlewares: {},
    });

    const second = await ok('domain.create', { host: 'two.example.com', applicationId: app.applicationId, certificateType: 'acme' });
    await ok('domain.update', { domainId: first.domainId, host: 'one.example.com', enabled: false });
    const all = await proxyCommands(serverId);
    expect(all.map((c) => c.revision)).toEqual([1, 2, 3]);
    const now = all[2]!.input;
    expect(now.routes.map((r) => r.domainId)).toEqual([first.domainId, second.domainId]);
    expect(routeOf(now, first.domainId)!.enabled).toBe(false);
    expect(routeOf(now, second.domainId)).toMatchObject({ https: true, certificateType: 'acme' });
  });

  it('routes the platform host\'s domains as server local, compose domains to their service\'s alias on the platform network', async () => {
    const before = (await proxyCommands('local')).length;
    const stack = await ok('compose.create', { name: unique('stack'), environmentId: env });
    const composeId = stack.composeId;
    const domain = await ok('domain.create', { host: unique('stack') + '.example.com', composeId, serviceName: 'web', port: 80 });
    const commands = await proxyCommands('local');
    expect(commands).toHaveLength(before + 1);
    expect(commands.at(-1)!.command.workloadKey).toBe('proxy:local');
    expect(routeOf(commands.at(-1)!.input, domain.domainId)).toMatchObject({ upstream: `web.${stack.appName}`, port: 80 });
    // Randomized, the service (and so its alias) carries the suffix; the route follows at once.
    await ok('compose.update', { composeId, randomize: true, suffix: 'r1' });
    expect(routeOf((await latest('local')).input, domain.domainId)).toMatchObject({ upstream: `web-r1.${stack.appName}` });
    await ok('compose.update', { composeId, appName: `${stack.appName}-b`, randomize: false });
    expect(routeOf((await latest('local')).input, domain.domainId)).toMatchObject({ upstream: `web.${stack.appName}-b` });

    await ok('compose.delete', { composeId });
    expect(routeOf((await latest('local')).input, domain.domainId)).toBeUndefined();
  });

  it('puts the basic-auth users of an application on its routes only', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const other = await createApp(serverId);
    const guarded = await ok('domain.create', { host: 'guarded.example.com', applicationId: app.applicationId });
    const open = await ok('domain.create', { host: 'open.example.com', applicationId: other.applicationId });

    const entry = await ok('security.create', { applicationId: app.applicationId, username: 'alice', password: 'wonderland' });
    let input = (await latest(serverId)).input;
    const [alice] = routeOf(input, guarded.domainId)!.basicAuth;
    expect(alice!.username).toBe('alice');
    expect(alice!.passwordHash).toMatch(/^\$2[aby]\$10\$/);
    expect(routeOf(input, open.domainId)!.basicAuth).toEqual([]);

    await ok('security.update', { securityId: entry.securityId, username: 'bob', password: 'builder' });
    input = (await latest(serverId)).input;
    expect(routeOf(input, guarded.domainId)!.basicAuth.map((u) => u.username)).toEqual(['bob']);

    await ok('security.delete', { securityId: entry.securityId });
    expect(routeOf((await latest(serverId)).input, guarded.domainId)!.basicAuth).toEqual([]);
    expect((await proxyCommands(serverId)).map((c) => c.revision)).toEqual([1, 2, 3, 4, 5]);
  });

  it('queues a configuration without the route on domain.delete and when its application goes', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const kept = await ok('domain.create', { host: 'kept.example.com', applicationId: app.applicationId });
    const gone = await ok('domain.create', { host: 'gone.example.com', applicationId: app.applicationId });
    await ok('domain.delete', { domainId: gone.domainId });
    expect((await latest(serverId)).input.routes.map((r) => r.domainId)).toEqual([kept.domainId]);

    await ok('application.delete', { applicationId: app.applicationId });
    const last = await latest(serverId);
    expect(last.input.routes).toEqual([]);
    expect(last.revision).toBe(4);
  });

  it('drops the routes of a deployed application once its agent reports the workload removed', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    await ok('application.deploy', { applicationId: app.applicationId });
    await ok('domain.create', { host: 'deployed.example.com', applicationId: app.applicationId });
    await ok('application.delete', { applicationId: app.applicationId });
    // The domain stays, routed, while the agent removes the service.
    expect((await latest(serverId)).input.routes).toHaveLength(1);

    const remove = await t.db.selectFrom('commands').select('id').where('workloadKey', '=', `application:${app.applicationId}`).where('kind', '=', 'COMMAND_KIND_REMOVE_WORKLOAD').executeTakeFirstOrThrow();
    const deps = { ids: (prefix: string) => unique(prefix), clock: () => new Date(), secrets: t.platform.secrets };
    const reports = new DeploymentReports({ db: t.db, clock: deps.clock, proxy: new ProxyConfig(deps, new CommandOutbox(t.platform.secrets)) });
    await reports.applyCommandResult(serverId, { commandId: remove.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    const last = await latest(serverId);
    expect(last.input.routes).toEqual([]);
    expect(last.revision).toBe(2);
  });

  it('routes preview domains to the preview and drops them with it', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const previewId = unique('prv');
    await t.db
      .insertInto('previewDeployments')
      .values({ id: previewId, applicationId: app.applicationId, appName: `${app.appName}-pr-7`, branch: 'feature', pullRequestId: '7', pullRequestNumber: '7', pullRequestUrl: 'https://git.example.com/pr/7', pullRequestTitle: 'Seven' })
      .execute();
    const domain = await ok('domain.create', { host: 'pr-7.example.com', previewDeploymentId: previewId });
    expect(routeOf((await latest(serverId)).input, domain.domainId)!.upstream).toBe(`${app.appName}-pr-7`);
    await ok('previewDeployment.delete', { previewDeploymentId: previewId });
    expect((await latest(serverId)).input.routes).toEqual([]);
  });

  it('keeps the configurations of two servers apart', async () => {
    const [a, b] = [await createServer(), await createServer()];
    const onA = await ok('domain.create', { host: 'same.example.com', applicationId: (await createApp(a)).applicationId });
    const onB = await ok('domain.create', { host: 'same.example.com', applicationId: (await createApp(b)).applicationId });
    await ok('domain.create', { host: 'b-only.example.com', applicationId: (await createApp(b)).applicationId });
    const [ofA, ofB] = [await proxyCommands(a), await proxyCommands(b)];
    expect(ofA.map((c) => c.revision)).toEqual([1]);
    expect(ofB.map((c) => c.revision)).toEqual([1, 2]);
    expect(ofA[0]!.input.routes.map((r) => r.domainId)).toEqual([onA.domainId]);
    expect(ofB[1]!.input.routes.map((r) => r.host)).toEqual(['same.example.com', 'b-only.example.com']);
    expect(ofB[1]!.input.routes[0]!.domainId).toBe(onB.domainId);
    expect(ofB.every((c) => c.command.serverId === b && c.command.workloadKey === `proxy:${b}`)).toBe(true);
  });

  it('serves a custom route with its stored certificate, key decrypted, and keeps it while a route needs it', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const certificate = await ok('certificates.create', { name: 'shop', certificateData: pem['shop.pem'], privateKey: pem['shop.key'], organizationId: t.organizationId, serverId });
    expect(await proxyCommands(serverId)).toEqual([]);
    const domain = await ok('domain.create', { host: 'shop.example.com', applicationId: app.applicationId, certificateType: 'custom' });
    const { input, revision } = await latest(serverId);
    expect(routeOf(input, domain.domainId)).toMatchObject({ https: true, certificateType: 'custom', certificateId: `${t.organizationId}/${certificate.certificateId}` });
    expect(input.certificates).toHaveLength(1);
    expect(input.certificates[0]).toMatchObject({ id: `${t.organizationId}/${certificate.certificateId}`, subjectNames: ['shop.example.com'] });
    expect(input.certificates[0]!.privateKey).toContain('-----BEGIN PRIVATE KEY-----');

    const body = await refuses('certificates.remove', { certificateId: certificate.certificateId }, 'certificateId');
    expect(body.message).toContain('no stored certificate covers shop.example.com');
    expect((await t.call('certificates.one', { certificateId: certificate.certificateId })).status).toBe(200);
    expect((await latest(serverId)).revision).toBe(revision);

    await ok('domain.delete', { domainId: domain.domainId });
    await ok('certificates.remove', { certificateId: certificate.certificateId });
  });

  it('refuses what the proxy cannot serve, naming the field, and changes and queues nothing', async () => {
    const serverId = await createServer();
    const app = await createApp(serverId);
    const domain = await ok('domain.create', { host: 'fine.example.com', applicationId: app.applicationId });
    const commands = async () => (await proxyCommands(serverId)).length;
    const count = await commands();
    const domains = async () => (await t.db.selectFrom('domains').select('id').where('serverId', '=', serverId).execute()).length;

    const wildcard = await refuses('domain.create', { host: '*.wild.example.com', applicationId: app.applicationId, certificateType: 'acme' }, 'certificateType');
    expect(wildcard.message).toContain('wildcard');
    await refuses('domain.create', { host: 'mw.example.com', applicationId: app.applicationId, middlewares: ['nowhere'] }, 'middlewares');
    await refuses('domain.update', { domainId: domain.domainId, host: 'fine.example.com', middlewares: ['nowhere'] }, 'middlewares');
    // The same host served over HTTPS by one route and plain HTTP by the other is fine; two ways to get its certificate are not.
    await ok('domain.create', { host: 'mixed.example.com', applicationId: app.applicationId, certificateType: 'acme' });
    const after = await commands();
    await refuses('domain.create', { host: 'mixed.example.com', path: '/api', https: true, applicationId: app.applicationId }, 'certificateType');
    for (const path of ['/a{b}', '/a*', '/a//b']) await refuses('domain.create', { host: 'paths.example.com', path, applicationId: app.applicationId }, 'path');
    await refuses('domain.create', { host: 'paths.example.com', internalPath: '/{x}', applicationId: app.applicationId }, 'internalPath');

    expect(await commands()).toBe(after);
    expect(after).toBe(count + 1);
    expect(await domains()).toBe(2);
    expect((await t.call('domain.one', { domainId: domain.domainId })).body.middlewares).toBeNull();
  });
});

describe('removing a project, an environment or an organization', () => {
  const hosts = async (serverId: string) => (await latest(serverId)).input.routes.map((r) => r.host).sort();

  it('queues the configuration of every server that routed to them, without their domains', async () => {
    const serverId = await createServer();
    const project = await ok('project.create', { name: unique('cascade') });
    const first = project.environments[0].environmentId;
    const second = (await ok('environment.create', { projectId: project.projectId, name: 'staging' })).environmentId;
    const app = async (environmentId: string, server: string | null) =>
      (await ok('application.create', { name: unique('web'), environmentId, ...(server && { serverId: server }) })).applicationId as string;

    await ok('domain.create', { host: 'prod.example.com', applicationId: await app(first, serverId) });
    const staging = await app(second, serverId);
    await ok('domain.create', { host: 'staging.example.com', applicationId: staging });
    const composeId = (await ok('compose.create', { name: unique('stack'), environmentId: second, serverId })).composeId;
    await ok('domain.create', { host: 'stack.example.com', composeId, serviceName: 'web', port: 80 });
    const previewId = unique('prv');
    await t.db
      .insertInto('previewDeployments')
      .values({ id: previewId, applicationId: staging, appName: `${previewId}-app`, branch: 'b', pullRequestId: '1', pullRequestNumber: '1', pullRequestUrl: 'https://git.example.com/pr/1', pullRequestTitle: 'One' })
      .execute();
    await ok('domain.create', { host: 'pr-1.example.com', previewDeploymentId: previewId });
    const local = unique('local') + '.example.com';
    await ok('domain.create', { host: local, applicationId: await app(second, null) });
    // Another project's route on the same server stays.
    await ok('domain.create', { host: 'elsewhere.example.com', applicationId: (await createApp(serverId)).applicationId });
    const before = (await latest(serverId)).revision;
    const localBefore = (await latest('local')).revision;

    await ok('environment.remove', { environmentId: second });
    expect(await hosts(serverId)).toEqual(['elsewhere.example.com', 'prod.example.com']);
    expect((await latest(serverId)).revision).toBe(before + 1);
    expect((await latest('local')).revision).toBe(localBefore + 1);
    expect((await latest('local')).input.routes.map((r) => r.host)).not.toContain(local);

    await ok('project.remove', { projectId: project.projectId });
    expect(await hosts(serverId)).toEqual(['elsewhere.example.com']);
    expect((await latest(serverId)).revision).toBe(before + 2);
    // The platform host had no route of the project any more: nothing more for it.
    expect((await latest('local')).revision).toBe(localBefore + 1);
  });

  it("queues the configurations of an organization's servers and of the platform host when it goes", async () => {
    const org = await ok('organization.create', { name: unique('leaving') });
    const key = (await ok('user.createApiKey', { name: 'leaving', metadata: { organizationId: org.organizationId } })).key;
    const as = t.as(key);
    const call = async (operation: string, input: Record<string, unknown>) => {
      const res = await as(operation, input);
      expect(res.status, `${operation}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body;
    };
    const serverId = unique('srv');
    await t.db.insertInto('servers').values({ id: serverId, organizationId: org.organizationId, name: serverId, address: '93.184.216.34' }).execute();
    const environmentId = (await call('project.create', { name: 'doomed' })).environments[0].environmentId;
    const remote = await call('application.create', { name: 'web', environmentId, serverId });
    const onHost = await call('application.create', { name: 'web', environmentId });
    await call('domain.create', { host: 'remote.leaving.example.com', applicationId: remote.applicationId });
    const hostDomain = await call('domain.create', { host: 'host.leaving.example.com', applicationId: onHost.applicationId });
    const localBefore = (await latest('local')).revision;
    expect(routeOf((await latest('local')).input, hostDomain.domainId)).toBeDefined();

    await ok('organization.delete', { organizationId: org.organizationId });
    expect((await latest(serverId)).input.routes).toEqual([]);
    expect((await latest(serverId)).revision).toBe(2);
    const local = await latest('local');
    expect(local.revision).toBe(localBefore + 1);
    expect(routeOf(local.input, hostDomain.domainId)).toBeUndefined();
  });
});

describe("the platform's own domain", () => {
  it('is in the platform host\'s configuration once assigned, routed to the control plane', async () => {
    const before = (await latest('local')).revision;
    await ok('settings.assignDomainServer', { host: 'Panel.Example.com', certificateType: 'none' });
    const queued = await latest('local');
    expect(queued.revision).toBe(before + 1);
    expect(queued.input.platform).toEqual({ host: 'panel.example.com', upstream: UPSTREAM, https: false, certificateType: 'none', certificateId: null });
    // Only the platform host serves it.
    const serverId = await createServer();
    await ok('domain.create', { host: 'not-the-panel.example.com', applicationId: (await createApp(serverId)).applicationId });
    expect((await latest(serverId)).input.platform).toBeNull();

    await ok('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'acme', letsEncryptEmail: 'ops@example.com' });
    expect((await latest('local')).input.platform).toMatchObject({ https: true, certificateType: 'acme', certificateId: null });
  });

  it('keeps routes off its host', async () => {
    const count = (await proxyCommands('local')).length;
    const app = await createApp(null);
    const body = await refuses('domain.create', { host: 'panel.example.com', path: '/x', applicationId: app.applicationId }, 'host');
    expect(body.message).toContain("platform's own domain");
    expect(await proxyCommands('local')).toHaveLength(count);
  });

  it('is served with a stored platform-host certificate, which stays while it needs it', async () => {
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'panel.key', '-out', 'panel.pem', '-days', '30', '-subj', '/CN=panel.example.com', '-addext', 'subjectAltName=DNS:panel.example.com'], { cwd: dir });
    const certificate = await ok('certificates.create', { name: 'panel', certificateData: await readFile(join(dir, 'panel.pem'), 'utf8'), privateKey: await readFile(join(dir, 'panel.key'), 'utf8'), organizationId: t.organizationId });
    await ok('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'custom' });
    const { input, revision } = await latest('local');
    expect(input.platform).toMatchObject({ host: 'panel.example.com', https: true, certificateType: 'custom', certificateId: `${t.organizationId}/${certificate.certificateId}` });
    const served = input.certificates.find((c) => c.id === `${t.organizationId}/${certificate.certificateId}`);
    expect(served!.privateKey).toContain('-----BEGIN PRIVATE KEY-----');

    const body = await refuses('certificates.remove', { certificateId: certificate.certificateId }, 'certificateId');
    expect(body.message).toContain('panel.example.com');
    expect((await latest('local')).revision).toBe(revision);

    await ok('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'none' });
    await ok('certificates.remove', { certificateId: certificate.certificateId });
    expect((await latest('local')).input.certificates.map((c) => c.id)).not.toContain(`${t.organizationId}/${certificate.certificateId}`);
  });

  it("is never served with another organization's certificate for its host", async () => {
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'desk.key', '-out', 'desk.pem', '-days', '30', '-subj', '/CN=desk.example.com', '-addext', 'subjectAltName=DNS:desk.example.com'], { cwd: dir });
    const [certificateData, privateKey] = [await readFile(join(dir, 'desk.pem'), 'utf8'), await readFile(join(dir, 'desk.key'), 'utf8')];
    const own = await ok('certificates.create', { name: 'desk', certificateId: 'zz-platform-desk', certificateData, privateKey, organizationId: t.organizationId });
    await ok('settings.assignDomainServer', { host: 'desk.example.com', certificateType: 'custom' });
    const ownProxyId = `${t.organizationId}/${own.certificateId}`;
    expect((await latest('local')).input.platform).toMatchObject({ certificateId: ownProxyId });

    // Organization B (an ordinary tenant) uploads a certificate for the platform's host name, with an id that sorts first.
    const joined = await addMember(t, 'cert-b@example.com', 'admin');
    const org = await t.as(joined.key)('organization.create', { name: 'Cert B' });
    const bKey = (await t.as(joined.key)('user.createApiKey', { name: 'b', metadata: { organizationId: org.body.organizationId } })).body.key;
    const theirs = await t.as(bKey)('certificates.create', { name: 'desk', certificateId: 'aa-tenant-desk', certificateData, privateKey, organizationId: org.body.organizationId });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    // And one under the very id of the platform's: ids are unique within an organization only.
    const same = await t.as(bKey)('certificates.create', { name: 'desk', certificateId: own.certificateId, certificateData, privateKey, organizationId: org.body.organizationId });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    await ok('settings.assignDomainServer', { host: 'desk.example.com', certificateType: 'custom' });
    const { input } = await latest('local');
    expect(input.platform).toMatchObject({ certificateId: ownProxyId });
    expect(input.certificates.map((c) => c.id)).toEqual([ownProxyId]);

    // Without a certificate of its own the platform domain serves none rather than the tenant's.
    await ok('settings.assignDomainServer', { host: 'desk.example.com', certificateType: 'none' });
    await ok('certificates.remove', { certificateId: own.certificateId });
    await refuses('settings.assignDomainServer', { host: 'desk.example.com', certificateType: 'custom' }, 'certificateType');
    await ok('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'none' });
  });

  it('changes nothing and queues nothing when refused', async () => {
    const before = await proxyCommands('local');
    const settings = (await t.call('settings.get')).body;
    await refuses('settings.assignDomainServer', { host: 'other.example.org', certificateType: 'custom' }, 'certificateType');
    await refuses('settings.assignDomainServer', { host: 'bad host', certificateType: 'none' }, 'host');
    expect(await proxyCommands('local')).toHaveLength(before.length);
    expect((await t.call('settings.get')).body).toEqual(settings);
  });
});
