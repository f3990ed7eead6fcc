import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
let projectId: string;
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}`;

beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'shop' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const createApp = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('application.create', { name: unique('web'), environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.applicationId as string;
};

/** A server row of an organization, as the server router will create them. */
const createServer = async (address: string, organizationId = t.organizationId) => {
  const id = unique('srv');
  await t.db.insertInto('servers').values({ id, organizationId, name: id, address }).execute();
  return id;
};

/** A compose stack row (the compose router's own tests cover its creation). */
const createCompose = async (serverId: string | null = null) => {
  const id = unique('cmp');
  await t.db
    .insertInto('composeStacks')
    .values({ id, environmentId: env, name: id, appName: id, serverId, env: t.platform.secrets.seal(''), sourceType: 'raw', composeType: 'container-compose', composeFile: 'services: {}\n' })
    .execute();
  return id;
};

const createDomain = async (input: Record<string, unknown>) => {
  const res = await t.call('domain.create', input);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const countDomains = async () => Number((await t.db.selectFrom('domains').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const refuses = async (operation: string, input: Record<string, unknown>, field: string) => {
  const res = await t.call(operation, input);
  expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
  return res;
};

describe('domain records', () => {
  it('creates an application domain with defaults, normalizes the host, and reads it back', async () => {
    const applicationId = await createApp();
    const domain = await createDomain({ host: ' Shop.Example.COM. ', applicationId });
    expect(domain).toMatchObject({
      host: 'shop.example.com',
      path: '/',
      internalPath: '/',
      port: 3000,
      https: false,
      certificateType: 'none',
      domainType: 'application',
      applicationId,
      composeId: null,
      previewDeploymentId: null,
      serverId: null,
      serviceName: null,
      stripPath: false,
      middlewares: null,
      forwardAuthEnabled: false,
      enabled: true,
    });
    expect(domain.domainId).toMatch(/^dom_/);
    expect(domain).not.toHaveProperty('organizationId');
    expect((await t.call('domain.one', { domainId: domain.domainId })).body).toEqual(domain);
    // No shared middleware is declared yet: a route naming one is refused, a disabled domain may keep the names.
    await refuses('domain.create', { host: 'api.shop.example.com', path: '/v1', applicationId, middlewares: ['rate-limit'] }, 'middlewares');
    const second = await createDomain({ host: 'api.shop.example.com', path: '/v1', applicationId, port: 8080 });
    const named = await t.call('domain.update', { domainId: second.domainId, host: second.host, enabled: false, middlewares: ['rate-limit', 'auth@file'] });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    const listed = await t.call('domain.byApplicationId', { applicationId });
    expect(listed.body.map((d: { domainId: string }) => d.domainId)).toEqual([domain.domainId, second.domainId]);
    expect(listed.body[1]).toMatchObject({ path: '/v1', port: 8080, middlewares: ['rate-limit', 'auth@file'] });
  });

  it('refuses hosts, paths and other fields that cannot route, naming the field and storing nothing', async () => {
    const applicationId = await createApp();
    const before = await countDomains();
    for (const host of ['https://shop.example.com', 'shop.example.com/x', 'shop.example.com:8080', 'sh op.example.com', 'a..b.com', 'a.*.example.com', '*.com', '-a.example.com', `${'a'.repeat(64)}.com`]) {
      await refuses('domain.create', { host, applicationId }, 'host');
    }
    await refuses('domain.create', { host: 'ok.example.com', path: 'api', applicationId }, 'path');
    await refuses('domain.create', { host: 'ok.example.com', path: '/a/../b', applicationId }, 'path');
    await refuses('domain.create', { host: 'ok.example.com', internalPath: 'x', applicationId }, 'internalPath');
    await refuses('domain.create', { host: 'ok.example.com', port: 0, applicationId }, 'port');
    await refuses('domain.create', { host: 'ok.example.com', port: 65536, applicationId }, 'port');
    await refuses('domain.create', { host: 'ok.example.com', customEntrypoint: 'web secure', applicationId }, 'customEntrypoint');
    await refuses('domain.create', { host: 'ok.example.com', middlewares: ['a', 'a'], applicationId }, 'middlewares');
    await refuses('domain.create', { host: 'ok.example.com', middlewares: ['bad name'], applicationId }, 'middlewares');
    expect(await countDomains()).toBe(before);
    const wildcard = await createDomain({ host: '*.Preview.example.com', applicationId });
    expect(wildcard.host).toBe('*.preview.example.com');
  });

  it('belongs to exactly one service, with domainType following it', async () => {
    const applicationId = await createApp();
    const composeId = await createCompose();
    await refuses('domain.create', { host: 'none.example.com' }, 'applicationId');
    await refuses('domain.create', { host: 'two.example.com', applicationId, composeId, serviceName: 'web', port: 80 }, 'composeId');
    await refuses('domain.create', { host: 'type.example.com', applicationId, domainType: 'compose' }, 'domainType');
    await refuses('domain.create', { host: 'svc.example.com', applicationId, serviceName: 'web' }, 'serviceName');
    await refuses('domain.create', { host: 'c1.example.com', composeId, port: 80 }, 'serviceName');
    await refuses('domain.create', { host: 'c2.example.com', composeId, serviceName: 'web' }, 'port');
    await refuses('domain.create', { host: 'c3.example.com', composeId, serviceName: 'we b', port: 80 }, 'serviceName');
    const domain = await createDomain({ host: 'stack.example.com', composeId, serviceName: 'web', port: 8080, domainType: 'compose' });
    expect(domain).toMatchObject({ domainType: 'compose', composeId, applicationId: null, serviceName: 'web', port: 8080 });
    expect((await t.call('domain.byComposeId', { composeId })).body.map((d: { domainId: string }) => d.domainId)).toEqual([domain.domainId]);
    await refuses('domain.update', { domainId: domain.domainId, host: 'stack.example.com', serviceName: null }, 'serviceName');
    expect((await t.call('domain.create', { host: 'x.example.com', applicationId: 'app_missing' })).status).toBe(404);
    expect((await t.call('domain.byComposeId', { composeId: 'cmp_missing' })).status).toBe(404);
  });

  it('keeps one host and path per server', async () => {
    const first = await createApp();
    const second = await createApp();
    await createDomain({ host: 'taken.example.com', applicationId: first });
    const clash = await refuses('domain.create', { host: 'TAKEN.example.com', applicationId: second }, 'host');
    expect(clash.body.message).toContain('taken.example.com');
    await refuses('domain.create', { host: 'taken.example.com', path: '/', applicationId: first }, 'host');
    await createDomain({ host: 'taken.example.com', path: '/api', applicationId: second });

    const serverId = await createServer('93.184.216.34');
    const remote = await createApp({ serverId });
    const elsewhere = await createDomain({ host: 'taken.example.com', applicationId: remote });
    expect(elsewhere.serverId).toBe(serverId);
    const remoteCompose = await createCompose(serverId);
    await refuses('domain.create', { host: 'taken.example.com', composeId: remoteCompose, serviceName: 'web', port: 80 }, 'host');

    const other = await createDomain({ host: 'free.example.com', applicationId: second });
    await refuses('domain.update', { domainId: other.domainId, host: 'taken.example.com' }, 'host');
    expect((await t.call('domain.one', { domainId: other.domainId })).body.host).toBe('free.example.com');
    const same = await t.call('domain.update', { domainId: other.domainId, host: 'free.example.com', port: 4000 });
    expect(same.status).toBe(200);
  });

  it('ties certificates to https, and custom ones to a stored certificate covering the host', async () => {
    const applicationId = await createApp();
    const acme = await createDomain({ host: 'secure.example.com', applicationId, certificateType: 'acme', customCertResolver: 'letsencrypt' });
    expect(acme).toMatchObject({ https: true, certificateType: 'acme', customCertResolver: 'letsencrypt' });
    await refuses('domain.create', { host: 'plain.example.com', applicationId, https: false, certificateType: 'acme' }, 'https');
    await refuses('domain.create', { host: 'plain.example.com', applicationId, customCertResolver: 'le' }, 'customCertResolver');
    await refuses('domain.update', { domainId: acme.domainId, host: 'secure.example.com', https: false }, 'https');
    const plain = await t.call('domain.update', { domainId: acme.domainId, host: 'secure.example.com', https: false, certificateType: 'none' });
    expect(plain.body).toMatchObject({ https: false, certificateType: 'none', customCertResolver: null });

    await refuses('domain.create', { host: 'custom.example.com', applicationId, certificateType: 'custom' }, 'certificateType');
    await t.db
      .insertInto('certificates')
      .values({
        id: unique('crt'), organizationId: t.organizationId, serverId: null, name: 'wildcard', certificateData: 'pem', privateKey: t.platform.secrets.seal('key'),
        certificatePath: `/etc/skiff/certificates/${unique('c')}`, subject: 'CN=*.custom.example.com', issuer: 'CN=ca',
        subjectNames: JSON.stringify(['*.custom.example.com']), notBefore: new Date(), expiresAt: new Date(Date.now() + 86_400_000), fingerprint: 'AA',
      })
      .execute();
    await refuses('domain.create', { host: 'custom.example.com', applicationId, certificateType: 'custom' }, 'certificateType');
    const custom = await createDomain({ host: 'www.custom.example.com', applicationId, certificateType: 'custom' });
    expect(custom).toMatchObject({ https: true, certificateType: 'custom' });
    const onServer = await createApp({ serverId: await createServer('93.184.216.35') });
    await refuses('domain.create', { host: 'api.custom.example.com', applicationId: onServer, certificateType: 'custom' }, 'certificateType');
  });

  it('updates the fields given and keeps the rest', async () => {
    const applicationId = await createApp();
    const domain = await createDomain({ host: 'edit.example.com', applicationId, path: '/app', stripPath: true, certificateType: 'acme', customCertResolver: 'le' });
    const res = await t.call('domain.update', { domainId: domain.domainId, host: 'Edited.example.com', port: 9000, enabled: false, middlewares: null, forwardAuthEnabled: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ host: 'edited.example.com', path: '/app', stripPath: true, port: 9000, enabled: false, middlewares: null, forwardAuthEnabled: true, https: true, customCertResolver: 'le', applicationId, domainType: 'application' });
    await refuses('domain.update', { domainId: domain.domainId, host: 'edited.example.com', domainType: 'preview' }, 'domainType');
    await refuses('domain.update', { domainId: domain.domainId, host: 'edited.example.com', path: 'no-slash' }, 'path');
    expect((await t.call('domain.one', { domainId: domain.domainId })).body).toEqual(res.body);
    expect((await t.call('domain.update', { domainId: 'dom_missing', host: 'x.example.com' })).status).toBe(404);
  });

  it('deletes a domain, and an application takes its domains with it', async () => {
    const applicationId = await createApp();
    const kept = await createDomain({ host: 'gone.example.com', applicationId });
    const deleted = await t.call('domain.delete', { domainId: kept.domainId });
    expect(deleted.body).toEqual(kept);
    expect((await t.call('domain.one', { domainId: kept.domainId })).status).toBe(404);
    await createDomain({ host: 'cascade1.example.com', applicationId });
    await createDomain({ host: 'cascade2.example.com', applicationId });
    expect((await t.call('application.delete', { applicationId })).status).toBe(200);
    const left = await t.db.selectFrom('domains').select('id').where('applicationId', '=', applicationId).execute();
    expect(left).toEqual([]);
    // The host is free again.
    await createDomain({ host: 'cascade1.example.com', applicationId: await createApp() });
  });
});

describe('generated and validated domains', () => {
  it('generates <appName>-<6 hex>-<ip>.sslip.io from a server with a public IPv4 address', async () => {
    const serverId = await createServer('93.184.216.34');
    const res = await t.call('domain.generateDomain', { appName: 'Shop_Web', serverId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.host).toMatch(/^shop-web-[0-9a-f]{6}-93-184-216-34\.sslip\.io$/);
    expect((await t.call('domain.generateDomain', { appName: 'Shop_Web', serverId })).body.host).not.toBe(res.body.host);
    expect((await t.call('domain.canGenerateProxyMeDomains', { serverId })).body).toEqual({ canGenerate: true, ipAddress: '93.184.216.34', reason: null });

    const lan = await createServer('192.168.1.20');
    await refuses('domain.generateDomain', { appName: 'shop', serverId: lan }, 'serverId');
    expect((await t.call('domain.canGenerateProxyMeDomains', { serverId: lan })).body).toMatchObject({ canGenerate: false, ipAddress: null });
    await refuses('domain.generateDomain', { appName: 'shop', serverId: 'srv_missing' }, 'serverId');
    expect((await t.call('domain.canGenerateProxyMeDomains', { serverId: 'srv_missing' })).status).toBe(404);
    await refuses('domain.generateDomain', { appName: '___', serverId }, 'appName');
  });

  it('answers a clear BAD_REQUEST (and false) for the platform host without a public IP', async () => {
    const res = await refuses('domain.generateDomain', { appName: 'shop' }, 'serverId');
    expect(res.body.message).toContain('SKIFF_PUBLIC_IP');
    const can = await t.call('domain.canGenerateProxyMeDomains', { serverId: '' });
    expect(can.body).toMatchObject({ canGenerate: false, ipAddress: null, reason: expect.stringContaining('SKIFF_PUBLIC_IP') });
  });

  it('uses the configured public IP for the platform host', async () => {
    const configured = await startTestPlatform({ publicIp: '93.184.216.40' });
    try {
      const res = await configured.call('domain.generateDomain', { appName: 'shop' });
      expect(res.body.host).toMatch(/^shop-[0-9a-f]{6}-93-184-216-40\.sslip\.io$/);
      expect((await configured.call('domain.canGenerateProxyMeDomains', { serverId: '' })).body.canGenerate).toBe(true);
      const check = await configured.call('domain.validateDomain', { domain: 'localhost' });
      expect(check.status).toBe(200);
      expect(check.body).toMatchObject({ valid: false, serverIp: '93.184.216.40' });
      expect(check.body.resolvedIps).toContain('127.0.0.1');
      expect(check.body.reason).toContain('93.184.216.40');
    } finally {
      await configured.close();
    }
  });

  it('validates a domain against the address of its server, answering DNS failures', async () => {
    const serverId = await createServer('127.0.0.1');
    const ok = await t.call('domain.validateDomain', { domain: 'LOCALHOST', serverId });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, reason: null, serverIp: '127.0.0.1' });
    expect(ok.body.resolvedIps).toContain('127.0.0.1');

    const elsewhere = await t.call('domain.validateDomain', { domain: 'localhost', serverId: await createServer('93.184.216.34') });
    expect(elsewhere.body).toMatchObject({ valid: false, serverIp: '93.184.216.34' });
    const missing = await t.call('domain.validateDomain', { domain: 'no-such-host.invalid', serverId });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ valid: false, resolvedIps: [] });
    expect(missing.body.reason).toBeTruthy();
    const local = await t.call('domain.validateDomain', { domain: 'localhost' });
    expect(local.body).toMatchObject({ valid: false, serverIp: null, reason: expect.stringContaining('SKIFF_PUBLIC_IP') });
    await refuses('domain.validateDomain', { domain: 'https://shop.example.com/' }, 'domain');
    await refuses('domain.validateDomain', { domain: 'localhost', serverId: 'srv_missing' }, 'serverId');
  });
});

describe('domain permissions', () => {
  it('follows access to the service, for members; admins reach everything', async () => {
    const member = await addMember(t, 'dev@example.com');
    const admin = await addMember(t, 'admin@example.com', 'admin');
    const m = t.as(member.key);
    const applicationId = await createApp();
    const domain = await createDomain({ host: 'perm.example.com', applicationId });
    const serverId = await createServer('93.184.216.50');

    expect((await m('domain.one', { domainId: domain.domainId })).status).toBe(403);
    expect((await m('domain.byApplicationId', { applicationId })).status).toBe(403);
    expect((await m('domain.create', { host: 'm.example.com', applicationId })).status).toBe(403);
    expect((await m('domain.update', { domainId: domain.domainId, host: 'perm.example.com', port: 1 })).status).toBe(403);
    expect((await m('domain.delete', { domainId: domain.domainId })).status).toBe(403);
    expect((await m('domain.canGenerateProxyMeDomains', { serverId })).status).toBe(403);
    expect((await m('domain.generateDomain', { appName: 'x', serverId })).status).toBe(403);

    await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [applicationId], accessedServers: [serverId] });
    expect((await m('domain.one', { domainId: domain.domainId })).status).toBe(200);
    expect((await m('domain.byApplicationId', { applicationId })).body).toHaveLength(1);
    const own = await m('domain.create', { host: 'm.example.com', applicationId });
    expect(own.status).toBe(200);
    expect((await m('domain.update', { domainId: domain.domainId, host: 'perm.example.com', port: 81 })).body.port).toBe(81);
    expect((await m('domain.delete', { domainId: own.body.domainId })).status).toBe(200);
    expect((await m('domain.canGenerateProxyMeDomains', { serverId })).body.canGenerate).toBe(true);

    const a = t.as(admin.key);
    expect((await a('domain.one', { domainId: domain.domainId })).status).toBe(200);
    expect((await a('domain.create', { host: 'admin.example.com', applicationId: await createApp() })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization', async () => {
    const applicationId = await createApp();
    const composeId = await createCompose();
    const domain = await createDomain({ host: 'mine.example.com', applicationId });
    const serverId = await createServer('93.184.216.60');
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('domain.one', { domainId: domain.domainId })).status).toBe(404);
    expect((await outsider('domain.update', { domainId: domain.domainId, host: 'stolen.example.com' })).status).toBe(404);
    expect((await outsider('domain.delete', { domainId: domain.domainId })).status).toBe(404);
    expect((await outsider('domain.byApplicationId', { applicationId })).status).toBe(404);
    expect((await outsider('domain.byComposeId', { composeId })).status).toBe(404);
    expect((await outsider('domain.create', { host: 'in.example.com', applicationId })).status).toBe(404);
    expect((await outsider('domain.canGenerateProxyMeDomains', { serverId })).status).toBe(404);
    expect((await outsider('domain.generateDomain', { appName: 'x', serverId })).status).toBe(400);
    expect((await t.call('domain.one', { domainId: domain.domainId })).body.host).toBe('mine.example.com');
  });
});

describe('hosts across organizations', () => {
  /** Another organization of the same user, with an application on the platform host. */
  const outsiderWithApp = async () => {
    const org = await t.call('organization.create', { name: unique('Other') });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.body.organizationId } })).body.key;
    const outsider = t.as(key);
    const project = (await outsider('project.create', { name: unique('theirs') })).body;
    const app = await outsider('application.create', { name: unique('web'), environmentId: project.environments[0].environmentId });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    return { outsider, organizationId: org.body.organizationId as string, applicationId: app.body.applicationId as string };
  };
  const refusedHost = (res: { status: number; body: any }, ...secrets: string[]) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain('host');
    for (const s of secrets) expect(JSON.stringify(res.body)).not.toContain(s);
  };

  it('a host belongs to one organization on a server: another cannot take its paths, nor cover it with a wildcard', async () => {
    const mine = await createApp();
    const victim = await createDomain({ host: 'victim.example.com', applicationId: mine });
    await createDomain({ host: '*.wild.example.com', applicationId: mine });
    const { outsider, applicationId } = await outsiderWithApp();

    refusedHost(await outsider('domain.create', { host: 'victim.example.com', path: '/login', applicationId }), t.organizationId, victim.domainId, mine);
    refusedHost(await outsider('domain.create', { host: 'VICTIM.example.com.', path: '/api', applicationId }));
    refusedHost(await outsider('domain.create', { host: '*.example.com', applicationId }), 'victim');
    refusedHost(await outsider('domain.create', { host: 'www.wild.example.com', applicationId }));
    refusedHost(await outsider('domain.create', { host: '*.wild.example.com', path: '/x', applicationId }));
    const theirs = await outsider('domain.create', { host: 'theirs.example.net', applicationId });
    expect(theirs.status).toBe(200);
    refusedHost(await outsider('domain.update', { domainId: theirs.body.domainId, host: 'victim.example.com', path: '/login' }));
    expect((await outsider('domain.one', { domainId: theirs.body.domainId })).body.host).toBe('theirs.example.net');

    // Hosts the wildcard does not cover, and the same organization's own paths, stay free.
    expect((await outsider('domain.create', { host: 'a.b.wild.example.com', applicationId })).status).toBe(200);
    expect((await createDomain({ host: 'victim.example.com', path: '/login', applicationId: await createApp() })).path).toBe('/login');
    expect((await createDomain({ host: 'x.wild.example.com', applicationId: mine })).host).toBe('x.wild.example.com');
    // Another server is another proxy: there the host is free.
    const serverId = await createServer('93.184.216.70');
    expect((await createDomain({ host: 'theirs.example.net', applicationId: await createApp({ serverId }) })).serverId).toBe(serverId);
  });

  it('a refusal of the proxy configuration names no route of another organization', async () => {
    const mine = await createDomain({ host: 'entry.example.com', applicationId: await createApp(), customEntrypoint: 'alt', https: true, certificateType: 'acme' });
    const { outsider, applicationId } = await outsiderWithApp();
    const res = await outsider('domain.create', { host: 'plain.example.net', applicationId, customEntrypoint: 'alt' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toContain('entrypoint alt');
    expect(JSON.stringify(res.body)).not.toContain(mine.domainId);
    expect(JSON.stringify(res.body)).not.toContain('entry.example.com');
  });

  it('the platform domain belongs to no organization: no route may take it or cover it on the platform host', async () => {
    expect((await t.call('settings.assignDomainServer', { host: 'panel.example.org', certificateType: 'none' })).status).toBe(200);
    try {
      const applicationId = await createApp();
      refusedHost(await t.call('domain.create', { host: 'panel.example.org', path: '/login', applicationId }));
      refusedHost(await t.call('domain.create', { host: '*.example.org', applicationId }));
      // A wildcard of an organization covering a host: the platform domain cannot take it either.
      await createDomain({ host: '*.corp.example.org', applicationId });
      refusedHost(await t.call('settings.assignDomainServer', { host: 'panel.corp.example.org', certificateType: 'none' }));
    } finally {
      await t.db.updateTable('platformSettings').set({ host: null }).where('id', '=', 'platform').execute();
    }
  });
});
