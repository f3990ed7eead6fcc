// Uploaded archives (`drop` sources), end to end: the archive is uploaded through the API
// (multipart), the agent process downloads it over gRPC (AgentArtifacts.FetchArchive),
// extracts it, builds its Containerfile and rolls the image out on the swarm, where the
// page from the archive is served.
import { type TestEntry, tarGz, waitFor, zipArchive } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBuiltImages } from './testing/built-images.js';
import { freePort, page, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
/** Applications whose built images go at the end. */
const built: string[] = [];
beforeAll(async () => {
  s = await startTestStack('drop');
}, 120_000);
afterAll(async () => {
  // The services first: an image whose tag goes while its service runs stays behind, untagged.
  try {
    await s?.close();
  } finally {
    await removeBuiltImages(built);
  }
}, 90_000);

/** A site whose Containerfile serves `text` with busybox's httpd on port 8080, inside `folder/` when given. */
const siteEntries = (text: string, folder = ''): TestEntry[] => [
  ...(folder ? [{ name: `${folder}/`, type: 'directory' as const }] : []),
  {
    name: `${folder ? `${folder}/` : ''}Containerfile`,
    content: 'FROM busybox:latest\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n',
  },
  { name: `${folder ? `${folder}/` : ''}index.html`, content: `${text}\n` },
];

async function dropApplication(name: string, port: number) {
  const { t } = s;
  const created = await t.call('application.create', { name, appName: `${name}-${s.run}`, environmentId: s.environmentId, sourceType: 'drop' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const app = created.body as { applicationId: string; appName: string };
  s.services.push(app.appName);
  built.push(app.applicationId);
  const build = await t.call('application.saveBuildType', {
    applicationId: app.applicationId,
    buildType: 'containerfile',
    containerfile: 'Containerfile',
    containerContextPath: null,
    containerBuildStage: null,
    legacyVersion: null,
    packTwoVersion: null,
  });
  expect(build.status, JSON.stringify(build.body)).toBe(200);
  const published = await t.call('application.update', {
    applicationId: app.applicationId,
    endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
  });
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  return app;
}

/** Uploads `archive` (multipart, as `curl -F archive=@site.tar.gz` would) and waits for the deployment to end. */
async function dropAndWait(applicationId: string, archive: Buffer) {
  const { t } = s;
  const form = new FormData();
  form.set('applicationId', applicationId);
  form.set('title', 'Upload');
  form.set('archive', new Blob([new Uint8Array(archive)]), 'site');
  const res = await t.platform.app.request('http://skiff.test/api/application.dropDeployment', {
    method: 'POST',
    headers: { 'x-api-key': t.ownerKey },
    body: form,
  });
  const body = (await res.json()) as { deploymentId: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return waitFor(
    async () => {
      const all = (await t.call('deployment.all', { applicationId })).body as { deploymentId: string; status: string }[];
      const mine = all.find((d) => d.deploymentId === body.deploymentId);
      return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
    },
    { timeoutMs: 180_000, intervalMs: 250, what: () => `deployment ${body.deploymentId} to end (agent output: ${s.agentOutput().slice(-2000)})` },
  );
}

const logOf = async (deploymentId: string) => (await s.t.call('deployment.readLogs', { deploymentId })).body as { log: string; reason: string | null };

describe('deploying an uploaded archive', () => {
  it('builds a tar.gz (its top-level folder flattened) and serves its page; a new upload replaces it', async () => {
    const port = await freePort();
    const app = await dropApplication('drop-tgz', port);
    const first = await dropAndWait(app.applicationId, await tarGz(siteEntries('hello from a tar.gz', 'my-site')));
    const log = await logOf(first.deploymentId);
    expect(first.status, log.reason ?? log.log.slice(-1500)).toBe('done');
    expect(log.log).toContain('top-level folder my-site/');
    await waitFor(async () => (await page(port)) === 'hello from a tar.gz', { timeoutMs: 30_000, what: 'the page of the archive' });

    const second = await dropAndWait(app.applicationId, await tarGz(siteEntries('second upload')));
    expect(second.status, (await logOf(second.deploymentId)).reason ?? '').toBe('done');
    await waitFor(async () => (await page(port)) === 'second upload', { timeoutMs: 30_000, what: 'the page of the second archive' });
  }, 300_000);

  it('builds a zip and serves its page', async () => {
    const port = await freePort();
    const app = await dropApplication('drop-zip', port);
    const result = await dropAndWait(app.applicationId, await zipArchive(siteEntries('hello from a zip', 'dist')));
    const log = await logOf(result.deploymentId);
    expect(result.status, log.reason ?? log.log.slice(-1500)).toBe('done');
    await waitFor(async () => (await page(port)) === 'hello from a zip', { timeoutMs: 30_000, what: 'the page of the zip' });
  }, 300_000);
});
