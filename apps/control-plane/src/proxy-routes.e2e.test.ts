// Routes through the reverse proxy, end to end over the API: two applications on one host by
// path (prefix stripping, internalPath, a path change), HTTPS with Caddy's internal issuer and
// with a stored custom certificate, and basic auth on every route of one application. One
// stack (its own agent and skiff-proxy container) and two deployed applications serve all.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answers, throughProxy, type ProxyRequest } from './testing/proxy-client.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

const ROUTE_CHANGE_MS = 30_000;

let s: TestStack;
/** Each answers `<name> <file>` for the files it has, 404 otherwise: the body shows the path it received. */
let appA: string;
let appB: string;

/** busybox httpd on 8080 serving, for each of `files`, a file whose content is `<name> <file>`. */
const pathEcho = (name: string, files: string[]) => ({
  env: `NAME=${name}\nFILES=${files.join(' ')}`,
  command: 'sh',
  args: ['-c', 'for f in $FILES; do mkdir -p "/www$(dirname "$f")" && echo "$NAME $f" > "/www$f"; done; exec httpd -f -p 8080 -h /www'],
  endpointSpecCluster: { Mode: 'dnsrr' },
});

async function deployed(name: string, files: string[]) {
  const app = await s.containerApplication(name, { containerImage: 'busybox:latest' });
  const updated = await s.t.call('application.update', { applicationId: app.applicationId, ...pathEcho(name, files) });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
  return app.applicationId;
}

beforeAll(async () => {
  s = await startTestStack('proxy-routes');
  [appA, appB] = await Promise.all([
    deployed('a', ['/index.html', '/api/hello.txt', '/apix/hello.txt']),
    deployed('b', ['/index.html', '/hello.txt', '/api/hello.txt', '/internal/hello.txt', '/internal/api/hello.txt']),
  ]);
}, 180_000);
afterAll(() => s?.close(), 60_000);

const http = (host: string, path = '/', auth?: string): ProxyRequest => ({ port: s.proxy.httpPort, host, path, auth });
const https = (host: string, path = '/', ca?: string): ProxyRequest => ({ port: s.proxy.httpsPort, host, path, tls: { ca } });
const until = (check: () => Promise<unknown>, what: string) => waitFor(check, { timeoutMs: ROUTE_CHANGE_MS, what });

/** The answer of one request, which must have been an HTTP answer. */
async function get(r: ProxyRequest) {
  const res = await throughProxy(r);
  if (!res.ok) throw new Error(`${r.host}${r.path ?? '/'}: ${res.error}`);
  return { status: res.status, body: res.body };
}

async function createDomain(applicationId: string, route: Record<string, unknown>) {
  const res = await s.t.call('domain.create', {
    path: '/',
    port: 8080,
    https: false,
    certificateType: 'none',
    domainType: 'application',
    applicationId,
    ...route,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.domainId as string;
}

async function updateDomain(domainId: string, route: Record<string, unknown>) {
  const res = await s.t.call('domain.update', { domainId, ...route });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A CA and a leaf for `host` signed by it, made with the openssl CLI. */
async function certificateFor(host: string) {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-e2e-tls-'));
  const openssl = (args: string[]) => promisify(execFile)('openssl', args, { cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=Skiff e2e CA ${s.run}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await openssl(['req', '-new', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${host}`,
      '-addext', `subjectAltName=DNS:${host}`, '-addext', 'extendedKeyUsage=serverAuth']);
    await openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', '2', '-days', '2',
      '-copy_extensions', 'copyall', '-out', 'leaf.crt']);
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { ca: read('ca.crt'), certificate: read('leaf.crt'), privateKey: read('leaf.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The root certificate of Caddy's local CA, from the proxy container's data volume. */
const caddyRoot = () =>
  waitFor(
    async () => {
      const res = await docker(['exec', s.proxy.container, 'cat', '/data/caddy/pki/authorities/local/root.crt']);
      return res.ok && res.out.includes('BEGIN CERTIFICATE') ? `${res.out}\n` : null;
    },
    { timeoutMs: ROUTE_CHANGE_MS, intervalMs: 250, what: "Caddy's local root certificate in the proxy's data volume" },
  );

describe('routes through the reverse proxy', () => {
  it('routes paths of one host to two applications, strips or keeps the prefix, adds internalPath, and follows a path change', async () => {
    const host = `paths-${s.run}.skiff.test`;
    await createDomain(appA, { host });
    const b = await createDomain(appB, { host, path: '/api', stripPath: true });
    await until(answers(http(host, '/api/hello.txt'), 200, 'b /hello.txt'), 'the /api route with its prefix stripped');
    expect(await get(http(host, '/api'))).toEqual({ status: 200, body: 'b /index.html' });
    expect(await get(http(host, '/'))).toEqual({ status: 200, body: 'a /index.html' });
    // A path that only starts with the same letters is not under /api.
    expect(await get(http(host, '/apix/hello.txt'))).toEqual({ status: 200, body: 'a /apix/hello.txt' });

    await updateDomain(b, { host, stripPath: false });
    await until(answers(http(host, '/api/hello.txt'), 200, 'b /api/hello.txt'), 'the /api route keeping its prefix');

    await updateDomain(b, { host, internalPath: '/internal' });
    await until(answers(http(host, '/api/hello.txt'), 200, 'b /internal/api/hello.txt'), 'internalPath in front of the kept prefix');

    await updateDomain(b, { host, stripPath: true });
    await until(answers(http(host, '/api/hello.txt'), 200, 'b /internal/hello.txt'), 'internalPath in place of the stripped prefix');

    await updateDomain(b, { host, path: '/v2', internalPath: null });
    await until(answers(http(host, '/v2/hello.txt'), 200, 'b /hello.txt'), 'the route moved to /v2');
    expect(await get(http(host, '/api/hello.txt'))).toEqual({ status: 200, body: 'a /api/hello.txt' });
    expect(await get(http(host, '/'))).toEqual({ status: 200, body: 'a /index.html' });
  }, 120_000);

  it("serves HTTPS with Caddy's internal issuer and redirects plain HTTP to it", async () => {
    const host = `tls-${s.run}.skiff.test`;
    await createDomain(appA, { host, https: true, certificateType: 'acme' });
    await until(answers(http(host, '/api/hello.txt?x=1'), 308), 'the HTTP to HTTPS redirect');
    const redirect = await throughProxy(http(host, '/api/hello.txt?x=1'));
    expect(redirect.ok && redirect.headers.location).toBe(`https://${host}:${s.proxy.httpsPort}/api/hello.txt?x=1`);

    const root = await caddyRoot();
    await until(answers(https(host, '/', root), 200, 'a /index.html'), `${host} over HTTPS, trusting Caddy's local root`);
    expect(await get(https(host, '/api/hello.txt', root))).toEqual({ status: 200, body: 'a /api/hello.txt' });
    // Without that root the certificate does not verify.
    const untrusted = await throughProxy(https(host));
    expect(untrusted.ok ? `answered ${untrusted.status}` : untrusted.error).toMatch(/CERT|SIGNATURE|ISSUER/);
  }, 120_000);

  it('serves a stored custom certificate for its host', async () => {
    const host = `custom-${s.run}.skiff.test`;
    const pair = await certificateFor(host);
    const { serverId } = (await s.t.call('application.one', { applicationId: appA })).body as { serverId: string | null };
    const stored = await s.t.call('certificates.create', {
      name: `e2e ${host}`,
      certificateData: pair.certificate,
      privateKey: pair.privateKey,
      organizationId: s.t.organizationId,
      serverId,
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    const leaf = new X509Certificate(pair.certificate);
    expect(stored.body.fingerprint).toBe(leaf.fingerprint256);

    await createDomain(appA, { host, https: true, certificateType: 'custom' });
    await until(answers(https(host, '/', pair.ca), 200, 'a /index.html'), `${host} over HTTPS with the custom certificate`);
    const res = await throughProxy(https(host, '/', pair.ca));
    expect(res.ok && res.peerFingerprint).toBe(leaf.fingerprint256);
    const untrusted = await throughProxy(https(host));
    expect(untrusted.ok ? `answered ${untrusted.status}` : untrusted.error).toMatch(/CERT|SIGNATURE|ISSUER/);
    expect((await get(http(host))).status).toBe(308);
  }, 120_000);

  it("puts basic auth on every route of an application and leaves another application's route open", async () => {
    const host = `auth-${s.run}.skiff.test`;
    await createDomain(appA, { host });
    await createDomain(appB, { host, path: '/one', stripPath: true });
    await createDomain(appB, { host, path: '/two', stripPath: true });
    await until(answers(http(host, '/two/hello.txt'), 200, 'b /hello.txt'), 'the routes of b, open');

    const entry = await s.t.call('security.create', { applicationId: appB, username: 'admin', password: 'correct-horse-battery' });
    expect(entry.status, JSON.stringify(entry.body)).toBe(200);
    await until(answers(http(host, '/one/hello.txt'), 401), 'basic auth in front of b');
    for (const path of ['/one/hello.txt', '/two/hello.txt']) {
      const denied = await throughProxy(http(host, path));
      expect(denied.ok && denied.status).toBe(401);
      expect(denied.ok && denied.headers['www-authenticate']).toMatch(/^Basic /);
      expect((await get(http(host, path, 'admin:wrong'))).status).toBe(401);
      expect(await get(http(host, path, 'admin:correct-horse-battery'))).toEqual({ status: 200, body: 'b /hello.txt' });
    }
    expect(await get(http(host, '/'))).toEqual({ status: 200, body: 'a /index.html' });
  }, 120_000);
});
