import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const run = promisify(execFile);

let t: TestPlatform;
let dir: string;
/** PEM texts made by openssl for these tests. */
const pem: Record<string, string> = {};
let fingerprint: string;
let n = 0;

const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-certs-'));
  // A self-signed pair for shop.example.com and *.shop.example.com, valid 30 days.
  await openssl('req', '-x509', ...ec, '-keyout', 'shop.key', '-out', 'shop.pem', '-days', '30', '-subj', '/O=Shop/CN=shop.example.com', '-addext', 'subjectAltName=DNS:shop.example.com,DNS:*.shop.example.com');
  // A key that belongs to nothing above.
  await openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'other.key');
  // A certificate that expired yesterday.
  await openssl('req', '-new', '-key', 'shop.key', '-subj', '/CN=old.example.com', '-out', 'old.csr');
  await openssl('x509', '-req', '-in', 'old.csr', '-signkey', 'shop.key', '-days', '-1', '-out', 'old.pem');
  // A leaf signed by a CA, without subjectAltName (its CN names the host).
  await openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Skiff Test CA');
  await openssl('req', '-new', ...ec, '-keyout', 'leaf.key', '-subj', '/CN=API.example.com', '-out', 'leaf.csr');
  await openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '30', '-out', 'leaf.pem');
  // The same key, encrypted with a passphrase.
  await writeFile(join(dir, 'pass.txt'), 'secret-pass\n');
  await openssl('pkey', '-in', 'shop.key', '-aes256', '-passout', 'file:pass.txt', '-out', 'shop-encrypted.key');
  for (const name of ['shop.key', 'shop.pem', 'other.key', 'old.pem', 'ca.pem', 'leaf.key', 'leaf.pem', 'shop-encrypted.key']) {
    pem[name] = await readFile(join(dir, name), 'utf8');
  }
  fingerprint = (await openssl('x509', '-in', 'shop.pem', '-noout', '-fingerprint', '-sha256')).stdout.trim().split('=')[1]!;
  t = await startTestPlatform();
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shopInput = (overrides: Record<string, unknown> = {}) => ({
  name: `shop ${++n}`,
  certificateData: pem['shop.pem'],
  privateKey: pem['shop.key'],
  organizationId: t.organizationId,
  ...overrides,
});

const createServer = async (organizationId = t.organizationId) => {
  const id = `srv_${++n}`;
  await t.db.insertInto('servers').values({ id, organizationId, name: id, address: '93.184.216.34' }).execute();
  return id;
};

const countCertificates = async () => (await t.db.selectFrom('certificates').select('id').execute()).length;

const refuses = async (input: Record<string, unknown>, field: string) => {
  const before = await countCertificates();
  const res = await t.call('certificates.create', input);
  expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
  expect(await countCertificates()).toBe(before);
  return res;
};

/** The base64 body of a PEM key, which must appear nowhere but sealed. */
const keyBody = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('-----')).join('');

describe('certificate records', () => {
  it('stores a matching pair, records what the certificate says, and never returns the key', async () => {
    const res = await t.call('certificates.create', shopInput({ autoRenew: false }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const cert = res.body;
    expect(cert).toMatchObject({
      organizationId: t.organizationId,
      serverId: null,
      autoRenew: false,
      subjectNames: ['shop.example.com', '*.shop.example.com'],
      fingerprint,
      certificatePath: `/etc/skiff/certificates/${cert.certificateId}`,
    });
    expect(cert.subject).toContain('CN=shop.example.com');
    expect(cert.issuer).toContain('O=Shop');
    expect(cert.certificateData).toContain('-----BEGIN CERTIFICATE-----');
    const days = (Date.parse(cert.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThan(31);
    expect(Date.parse(cert.notBefore)).toBeLessThanOrEqual(Date.now());
    expect(cert).not.toHaveProperty('privateKey');
    expect(JSON.stringify(cert)).not.toContain('PRIVATE KEY');

    expect((await t.call('certificates.one', { certificateId: cert.certificateId })).body).toEqual(cert);
    expect((await t.call('certificates.all')).body.map((c: { certificateId: string }) => c.certificateId)).toContain(cert.certificateId);

    const row = await t.db.selectFrom('certificates').selectAll().where('id', '=', cert.certificateId).executeTakeFirstOrThrow();
    const body = keyBody(pem['shop.key']!);
    expect(body.length).toBeGreaterThan(40);
    expect(JSON.stringify(row)).not.toContain(body.slice(0, 40));
    expect(row.privateKey).not.toContain('PRIVATE KEY');
    // The sealed key opens to a key of this certificate.
    expect(t.platform.secrets.open(row.privateKey)).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it('refuses a key that does not belong to the certificate', async () => {
    const res = await refuses(shopInput({ privateKey: pem['other.key'] }), 'privateKey');
    expect(res.body.message).toContain('does not match');
    await refuses(shopInput({ privateKey: pem['leaf.key'] }), 'privateKey');
  });

  it('refuses certificates that do not parse, expired ones, and keys in the certificate field', async () => {
    await refuses(shopInput({ certificateData: 'garbage' }), 'certificateData');
    await refuses(shopInput({ certificateData: '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n' }), 'certificateData');
    const expired = await refuses(shopInput({ certificateData: pem['old.pem'] }), 'certificateData');
    expect(expired.body.message).toContain('expired');
    await refuses(shopInput({ certificateData: pem['shop.pem']! + pem['shop.key']! }), 'certificateData');
    await refuses(shopInput({ privateKey: 'garbage' }), 'privateKey');
    await refuses(shopInput({ privateKey: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n' }), 'privateKey');
    await refuses(shopInput({ privateKey: pem['shop.pem'] }), 'privateKey');
    await refuses(shopInput({ privateKey: pem['shop-encrypted.key'] }), 'privateKey');
  });

  it('takes a chain leaf first, and names the host from the CN when there is no subjectAltName', async () => {
    const chain = pem['leaf.pem']! + pem['ca.pem']!;
    const res = await t.call('certificates.create', shopInput({ certificateData: chain, privateKey: pem['leaf.key'] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.subjectNames).toEqual(['api.example.com']);
    expect(res.body.issuer).toContain('CN=Skiff Test CA');
    expect(res.body.certificateData.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    await refuses(shopInput({ certificateData: pem['ca.pem']! + pem['leaf.pem']!, privateKey: pem['leaf.key'] }), 'certificateData');
  });

  it('keeps certificatePath a folder name under the certificate directory, unique per server', async () => {
    const named = await t.call('certificates.create', shopInput({ certificatePath: 'shop-wildcard' }));
    expect(named.body.certificatePath).toBe('/etc/skiff/certificates/shop-wildcard');
    for (const bad of ['../etc', 'a/b', '/etc/passwd', '/etc/skiff/certificates/../x', '.', '..', 'a..b', '']) {
      await refuses(shopInput({ certificatePath: bad }), 'certificatePath');
    }
    await refuses(shopInput({ certificatePath: '/etc/skiff/certificates/shop-wildcard' }), 'certificatePath');
    const serverId = await createServer();
    const onServer = await t.call('certificates.create', shopInput({ certificatePath: 'shop-wildcard', serverId }));
    expect(onServer.status, JSON.stringify(onServer.body)).toBe(200);
    expect(onServer.body.serverId).toBe(serverId);
  });

  it('takes a chosen certificateId once, and checks the organization and server', async () => {
    const chosen = await t.call('certificates.create', shopInput({ certificateId: 'crt_chosen-1' }));
    expect(chosen.body.certificateId).toBe('crt_chosen-1');
    await refuses(shopInput({ certificateId: 'crt_chosen-1' }), 'certificateId');
    await refuses(shopInput({ certificateId: 'bad id!' }), 'certificateId');
    await refuses(shopInput({ serverId: 'srv_missing' }), 'serverId');
    const other = await t.call('organization.create', { name: 'Other' });
    await refuses(shopInput({ serverId: await createServer(other.body.organizationId) }), 'serverId');
    const foreign = await t.call('certificates.create', shopInput({ organizationId: other.body.organizationId }));
    expect(foreign.status).toBe(404);
  });

  it('removes a certificate', async () => {
    const cert = (await t.call('certificates.create', shopInput())).body;
    const removed = await t.call('certificates.remove', { certificateId: cert.certificateId });
    expect(removed.body).toEqual(cert);
    expect((await t.call('certificates.one', { certificateId: cert.certificateId })).status).toBe(404);
    expect((await t.call('certificates.remove', { certificateId: cert.certificateId })).status).toBe(404);
  });

  it('lets a custom-certificate domain use a stored certificate', async () => {
    const env = (await t.call('project.create', { name: 'tls' })).body.environments[0].environmentId;
    const applicationId = (await t.call('application.create', { name: 'tls', environmentId: env })).body.applicationId;
    const domain = await t.call('domain.create', { host: 'www.shop.example.com', applicationId, certificateType: 'custom' });
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    expect(domain.body).toMatchObject({ certificateType: 'custom', https: true });
  });
});

describe('certificate permissions', () => {
  it('lets admins create and remove; members read those of the platform host and of their servers', async () => {
    const member = await addMember(t, 'dev@example.com');
    const admin = await addMember(t, 'admin@example.com', 'admin');
    const m = t.as(member.key);
    const a = t.as(admin.key);
    const serverId = await createServer();
    const local = (await a('certificates.create', shopInput())).body;
    expect(local.certificateId).toBeTruthy();
    const remote = (await a('certificates.create', shopInput({ serverId }))).body;

    expect((await m('certificates.create', shopInput())).status).toBe(403);
    expect((await m('certificates.remove', { certificateId: local.certificateId })).status).toBe(403);
    expect((await m('certificates.one', { certificateId: local.certificateId })).status).toBe(200);
    expect((await m('certificates.one', { certificateId: remote.certificateId })).status).toBe(403);
    let seen = (await m('certificates.all')).body.map((c: { certificateId: string }) => c.certificateId);
    expect(seen).toContain(local.certificateId);
    expect(seen).not.toContain(remote.certificateId);

    await t.call('user.assignPermissions', { id: member.userId, accessedServers: [serverId] });
    expect((await m('certificates.one', { certificateId: remote.certificateId })).status).toBe(200);
    seen = (await m('certificates.all')).body.map((c: { certificateId: string }) => c.certificateId);
    expect(seen).toContain(remote.certificateId);
    expect((await a('certificates.remove', { certificateId: remote.certificateId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, and lists only its own', async () => {
    const cert = (await t.call('certificates.create', shopInput())).body;
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('certificates.one', { certificateId: cert.certificateId })).status).toBe(404);
    expect((await outsider('certificates.remove', { certificateId: cert.certificateId })).status).toBe(404);
    expect((await outsider('certificates.all')).body).toEqual([]);
    expect((await outsider('certificates.create', shopInput())).status).toBe(404);
    const theirs = await outsider('certificates.create', shopInput({ organizationId: other.body.organizationId }));
    expect(theirs.status).toBe(200);
    expect((await t.call('certificates.one', { certificateId: theirs.body.certificateId })).status).toBe(404);
    expect((await t.call('certificates.one', { certificateId: cert.certificateId })).status).toBe(200);
  });

  it('reveals nothing of another organization through a chosen certificateId or certificatePath', async () => {
    const mine = (await t.call('certificates.create', shopInput({ certificateId: 'crt_mine-quiet', certificatePath: 'quiet-path' }))).body;
    await t.call('certificates.create', shopInput({ certificatePath: 'quiet-derived' }));
    const other = await t.call('organization.create', { name: 'Quiet' });
    const organizationId = other.body.organizationId;
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId } })).body.key;
    const outsider = t.as(key);
    const strip = ({ requestId: _r, ...rest }: Record<string, unknown>) => rest;
    // The same folder name on the platform host: another organization's path is not in its way.
    const samePath = await outsider('certificates.create', shopInput({ organizationId, certificatePath: 'quiet-path' }));
    expect(samePath.status, JSON.stringify(samePath.body)).toBe(200);
    // A path derived from a chosen id that is another organization's path: free too.
    const derived = await outsider('certificates.create', shopInput({ organizationId, certificateId: 'quiet-derived' }));
    expect(derived.status, JSON.stringify(derived.body)).toBe(200);
    expect(derived.body.certificatePath).toBe('/etc/skiff/certificates/quiet-derived');
    // Its own path stays unique on the server.
    await refuses(shopInput({ certificatePath: 'quiet-path' }), 'certificatePath');
    // Ids are unique within an organization: another organization's id is free, so a collision tells nothing.
    const same = await outsider('certificates.create', shopInput({ organizationId, certificateId: mine.certificateId }));
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.certificateId).toBe(mine.certificateId);
    const ownTaken = await outsider('certificates.create', shopInput({ organizationId, certificateId: derived.body.certificateId }));
    expect(ownTaken.status).toBe(400);
    expect(strip(ownTaken.body)).toMatchObject({ code: 'BAD_REQUEST', issues: [{ path: ['certificateId'], message: 'already used' }] });
    // Each organization reads, serves and removes its own under the shared id.
    expect((await t.call('certificates.one', { certificateId: mine.certificateId })).body.name).toBe(mine.name);
    expect((await outsider('certificates.one', { certificateId: mine.certificateId })).body.name).toBe(same.body.name);
    expect((await outsider('certificates.remove', { certificateId: mine.certificateId })).status).toBe(200);
    expect((await t.call('certificates.one', { certificateId: mine.certificateId })).status).toBe(200);
    expect((await outsider('certificates.one', { certificateId: mine.certificateId })).status).toBe(404);
  });
});
