import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { Metadata, credentials as grpcCredentials, type ServiceError, status } from '@grpc/grpc-js';
import { serve } from '@hono/node-server';
import { AgentArtifactsClient, Command, CommandStatus } from '@skiff/proto';
import { type TestEntry, tarGz, zipArchive } from '@skiff/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

const MAX_BYTES = 256 * 1024;
const credential = `drop-test-${randomBytes(16).toString('hex')}`;

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, localAgentCredential: credential, archives: { maxBytes: MAX_BYTES } });
  env = (await t.call('project.create', { name: 'drops' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const site: TestEntry[] = [
  { name: 'site/Containerfile', content: 'FROM busybox:latest\nCOPY index.html /www/index.html\n' },
  { name: 'site/index.html', content: '<h1>dropped</h1>' },
];

async function dropApp(overrides: Record<string, unknown> = {}) {
  const res = await t.call('application.create', { name: 'drop', environmentId: env, sourceType: 'drop', ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { applicationId: string; appName: string };
}

/** POSTs a multipart upload, as a browser or `curl -F` would. */
async function upload(applicationId: string | undefined, archive: Buffer | null, options: { key?: string; title?: string } = {}) {
  const form = new FormData();
  if (applicationId !== undefined) form.set('applicationId', applicationId);
  if (options.title) form.set('title', options.title);
  if (archive) form.set('archive', new Blob([new Uint8Array(archive)]), 'upload.bin');
  const res = await t.platform.app.request('http://skiff.test/api/application.dropDeployment', {
    method: 'POST',
    headers: { 'x-api-key': options.key ?? t.ownerKey },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const archiveRows = (applicationId: string) =>
  t.db.selectFrom('applicationArchives').selectAll().where('applicationId', '=', applicationId).orderBy('createdAt', 'asc').execute();
const archiveFiles = () => readdirSync(t.platform.archives.incomingDir.replace(/\/\.incoming$/, '')).filter((n) => !n.startsWith('.'));
const incoming = () => (existsSync(t.platform.archives.incomingDir) ? readdirSync(t.platform.archives.incomingDir) : []);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('application.dropDeployment', () => {
  it('keeps a tar.gz (row and 0600 file) and queues a deployment carrying it', async () => {
    const app = await dropApp();
    const data = await tarGz(site);
    const res = await upload(app.applicationId, data, { title: 'Site v1' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ applicationId: app.applicationId, status: 'queued', title: 'Site v1' });

    const [row] = await archiveRows(app.applicationId);
    expect(row).toMatchObject({ format: 'tar.gz', sha256: sha(data) });
    expect(Number(row!.size)).toBe(data.length);
    const file = t.platform.archives.pathOf(row!.id);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(incoming()).toEqual([]);

    const command = await t.db.selectFrom('commands').select('payload').where('deploymentId', '=', res.body.deploymentId).executeTakeFirstOrThrow();
    const decoded = Command.decode(new CommandOutbox(t.platform.secrets).open(command.payload));
    const source = decoded.payload?.$case === 'deployApplication' ? decoded.payload.value.source : undefined;
    expect(source?.kind).toEqual({ $case: 'archive', value: { archiveId: row!.id, format: 'tar.gz', size: String(data.length), sha256: sha(data) } });
  });

  it('deploys each of two simultaneous uploads with its own archive, not the newest', async () => {
    const app = await dropApp();
    const [a, b] = await Promise.all([
      tarGz([{ name: 'index.html', content: 'upload a' }]),
      tarGz([{ name: 'index.html', content: 'upload b' }]),
    ]);
    const answers = await Promise.all([upload(app.applicationId, a), upload(app.applicationId, b)]);
    for (const [i, res] of answers.entries()) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const command = await t.db.selectFrom('commands').select('payload').where('deploymentId', '=', res.body.deploymentId).executeTakeFirstOrThrow();
      const decoded = Command.decode(new CommandOutbox(t.platform.secrets).open(command.payload));
      const source = decoded.payload?.$case === 'deployApplication' ? decoded.payload.value.source : undefined;
      expect(source?.kind?.$case === 'archive' ? source.kind.value.sha256 : null).toBe(sha(i === 0 ? a : b));
    }
  });

  it('recognises a zip by its content, whatever the file is called', async () => {
    const app = await dropApp();
    const res = await upload(app.applicationId, await zipArchive(site));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await archiveRows(app.applicationId)).map((r) => r.format)).toEqual(['zip']);
  });

  /** Marks an application's deployments as ended, as the agent's reports would. */
  const finishDeployments = (applicationId: string, ids?: string[]) => {
    let q = t.db.updateTable('deployments').set({ status: 'done', finishedAt: new Date() }).where('applicationId', '=', applicationId);
    if (ids) q = q.where('id', 'in', ids);
    return q.execute();
  };

  /** An hour passes: the application's archives and deployments were created an hour earlier. */
  const anHourLater = async (applicationId: string) => {
    await sql`update application_archives set created_at = created_at - interval '1 hour' where application_id = ${applicationId}`.execute(t.db);
    await sql`update deployments set created_at = created_at - interval '1 hour' where application_id = ${applicationId}`.execute(t.db);
  };

  it('keeps the newest three archives of an application and removes older files', async () => {
    const app = await dropApp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: `v${i}` }]));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push((await archiveRows(app.applicationId)).at(-1)!.id);
      await finishDeployments(app.applicationId);
      await anHourLater(app.applicationId);
    }
    expect((await archiveRows(app.applicationId)).map((r) => r.id)).toEqual(ids.slice(2));
    const files = archiveFiles();
    for (const id of ids.slice(2)) expect(files).toContain(id);
    for (const id of ids.slice(0, 2)) expect(files).not.toContain(id);
  });

  it('keeps the archive of a queued deployment past newer uploads, and prunes it once the deployment ended', async () => {
    const app = await dropApp();
    const uploads: { archiveId: string; deploymentId: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: `quick ${i}` }]));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      uploads.push({ archiveId: (await archiveRows(app.applicationId)).at(-1)!.id, deploymentId: res.body.deploymentId });
    }
    // Four quick uploads, none built yet: the first deployment's archive is still there to fetch.
    expect((await archiveRows(app.applicationId)).map((r) => r.id)).toEqual(uploads.map((u) => u.archiveId));
    expect(await t.platform.archives.locate('local', uploads[0]!.archiveId)).not.toBeNull();

    // The later three end; the first is still queued when a fifth upload comes, an hour later.
    await finishDeployments(app.applicationId, uploads.slice(1).map((u) => u.deploymentId));
    await anHourLater(app.applicationId);
    const fifth = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: 'quick 4' }]));
    expect(fifth.status, JSON.stringify(fifth.body)).toBe(200);
    expect((await archiveRows(app.applicationId)).map((r) => r.id)).toEqual([...uploads.map((u) => u.archiveId), expect.any(String)]);
    expect(archiveFiles()).toContain(uploads[0]!.archiveId);
    expect(await t.platform.archives.locate('local', uploads[0]!.archiveId)).not.toBeNull();

    // Once every deployment ended, the next upload prunes back to the newest three.
    await finishDeployments(app.applicationId);
    await anHourLater(app.applicationId);
    const sixth = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: 'quick 5' }]));
    expect(sixth.status, JSON.stringify(sixth.body)).toBe(200);
    const kept = (await archiveRows(app.applicationId)).map((r) => r.id);
    expect(kept).toHaveLength(3);
    expect(kept).toEqual(expect.arrayContaining([uploads[3]!.archiveId]));
    for (const u of uploads.slice(0, 3)) expect(archiveFiles()).not.toContain(u.archiveId);
  });

  it('keeps the archive a queued redeploy builds (the newest before it), however old', async () => {
    const app = await dropApp();
    const old: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: `old ${i}` }]));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const id = (await archiveRows(app.applicationId)).at(-1)!.id;
      old.push(id);
      // Uploaded hours ago, and deployed since.
      await sql`update application_archives set created_at = now() - make_interval(hours => ${3 - i}) where id = ${id}`.execute(t.db);
    }
    await finishDeployments(app.applicationId);
    const redeploy = await t.call('application.redeploy', { applicationId: app.applicationId });
    expect(redeploy.status, JSON.stringify(redeploy.body)).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: `new ${i}` }]));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const kept = (await archiveRows(app.applicationId)).map((r) => r.id);
    // The redeploy builds old[2] (the newest when it was queued); older ones go.
    expect(kept).toHaveLength(4);
    expect(kept[0]).toBe(old[2]);
    expect(archiveFiles()).toContain(old[2]);
    for (const id of old.slice(0, 2)) expect(archiveFiles()).not.toContain(id);
  });

  it('removes the files of deleted applications (a file without a row is garbage)', async () => {
    const dir = t.platform.archives.incomingDir.replace(/\/\.incoming$/, '');
    await mkdir(dir, { recursive: true });
    writeFileSync(`${dir}/arc_orphan`, 'left behind');
    const app = await dropApp();
    await t.db.insertInto('applicationArchives').values({ id: 'arc_kept', applicationId: app.applicationId, format: 'zip', size: 1, sha256: 'a'.repeat(64) }).execute();
    writeFileSync(`${dir}/arc_kept`, 'x');
    expect(await t.platform.archives.sweep()).toBeGreaterThanOrEqual(1);
    expect(existsSync(`${dir}/arc_orphan`)).toBe(false);
    expect(existsSync(`${dir}/arc_kept`)).toBe(true);
    await t.db.deleteFrom('applications').where('id', '=', app.applicationId).execute();
    await t.platform.archives.sweep();
    expect(existsSync(`${dir}/arc_kept`)).toBe(false);
  });

  it('removes the archive files of an application deleted at once (nothing of it reached an agent)', async () => {
    const dir = t.platform.archives.incomingDir.replace(/\/\.incoming$/, '');
    await mkdir(dir, { recursive: true });
    const app = await dropApp();
    // Kept, with no deployment (say its deployments were pruned): the application is deleted at once.
    await t.db.insertInto('applicationArchives').values({ id: 'arc_of_deleted', applicationId: app.applicationId, format: 'zip', size: 1, sha256: 'a'.repeat(64) }).execute();
    writeFileSync(`${dir}/arc_of_deleted`, 'x');
    expect((await t.call('application.delete', { applicationId: app.applicationId })).status).toBe(200);
    expect((await t.call('application.one', { applicationId: app.applicationId })).status).toBe(404);
    expect(existsSync(`${dir}/arc_of_deleted`)).toBe(false);
  });

  const refusedWithArchive = async (applicationId: string, data: Buffer | null, message: RegExp) => {
    const before = archiveFiles().length;
    const res = await upload(applicationId, data);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.issues.map((i: { path: string[] }) => i.path[0])).toContain('archive');
    expect(res.body.message).toMatch(message);
    expect(await archiveRows(applicationId)).toEqual([]);
    expect(archiveFiles()).toHaveLength(before);
    expect(incoming()).toEqual([]);
    expect((await t.db.selectFrom('deployments').select('id').where('applicationId', '=', applicationId).execute())).toEqual([]);
  };

  it('refuses an archive over the size limit, keeping nothing', async () => {
    const app = await dropApp();
    await refusedWithArchive(app.applicationId, await tarGz([{ name: 'big.bin', content: randomBytes(MAX_BYTES + 10) }]), /larger than 262144 bytes/);
  });

  it('refuses what is not a zip or tar.gz, or a broken one', async () => {
    const app = await dropApp();
    await refusedWithArchive(app.applicationId, Buffer.from('just some text, called site.zip'), /not a zip or tar.gz/);
    await refusedWithArchive(app.applicationId, Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), randomBytes(100)]), /not a readable tar.gz/);
    await refusedWithArchive(app.applicationId, null, /required/);
  });

  it.each([
    ['a traversal entry', 'tar.gz', { name: '../../etc/cron.d/evil', content: 'x' }, /refused entry "\.\.\/\.\.\/etc\/cron\.d\/evil": `\.\.` segments/],
    ['an absolute path', 'zip', { name: '/etc/evil.conf', content: 'x' }, /refused entry "\/etc\/evil\.conf": absolute paths/],
    ['a symlink', 'tar.gz', { name: 'site/link', type: 'symlink', linkname: '/etc/shadow' }, /refused entry "site\/link": links are not allowed/],
    ['a zip symlink', 'zip', { name: 'site/link', type: 'symlink', linkname: '/etc/shadow' }, /refused entry "site\/link": links are not allowed/],
    ['a hard link', 'tar.gz', { name: 'site/hard', type: 'hardlink', linkname: 'site/index.html' }, /links are not allowed/],
    ['a device', 'tar.gz', { name: 'site/null', type: 'device' }, /device entries/],
    ['a zip bomb', 'zip', { name: 'site/zeros', content: Buffer.alloc(4 * 1024 * 1024) }, /refused entry "site\/zeros": compressed more than/],
    ['a lying zip header', 'zip', { name: 'site/liar', content: 'y'.repeat(3000), declaredSize: 20 }, /refused entry "site\/liar"/],
  ] as const)('refuses %s, naming the entry', async (_what, format, evil, message) => {
    const app = await dropApp();
    const entries = [...site, evil as TestEntry];
    await refusedWithArchive(app.applicationId, format === 'zip' ? await zipArchive(entries) : await tarGz(entries), message);
  });

  it('refuses applications whose source is not drop, naming sourceType', async () => {
    const app = await dropApp({ sourceType: 'git' });
    const res = await upload(app.applicationId, await tarGz(site));
    expect(res.status).toBe(400);
    expect(res.body.issues.map((i: { path: string[] }) => i.path[0])).toEqual(['sourceType']);
    expect(await archiveRows(app.applicationId)).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it("answers NOT_FOUND for another organization's application, and UNAUTHORIZED without a key", async () => {
    const app = await dropApp();
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    expect((await upload(app.applicationId, await tarGz(site), { key })).status).toBe(404);
    expect((await upload(app.applicationId, await tarGz(site), { key: 'skf_nobody' })).status).toBe(401);
    expect(await archiveRows(app.applicationId)).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it('takes uploads over a real HTTP connection, and refuses one over the limit', async () => {
    const server = serve({ fetch: t.platform.app.fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/application.dropDeployment`;
      const app = await dropApp();
      const send = async (archive: Buffer) => {
        const form = new FormData();
        form.set('applicationId', app.applicationId);
        form.set('archive', new Blob([new Uint8Array(archive)]), 'site.tgz');
        const res = await fetch(url, { method: 'POST', headers: { 'x-api-key': t.ownerKey }, body: form, signal: AbortSignal.timeout(20_000) });
        return { status: res.status, body: (await res.json()) as any };
      };
      const ok = await send(await tarGz(site));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const big = await send(randomBytes(MAX_BYTES * 3)).catch((err: Error) => ({ status: 0, body: err.message }));
      // The server answers before reading the rest; a client may see the answer or a closed connection.
      if (big.status !== 0) expect(big.body.issues[0].path).toEqual(['archive']);
      expect(await archiveRows(app.applicationId)).toHaveLength(1);
      expect(incoming()).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('validates the text fields like any operation', async () => {
    const res = await upload(undefined, await tarGz(site));
    expect(res.status).toBe(400);
    expect(res.body.issues.map((i: { path: string[] }) => i.path[0])).toContain('applicationId');
    expect(incoming()).toEqual([]);
  });
});

describe('AgentArtifacts.FetchArchive', () => {
  let client: AgentArtifactsClient;
  beforeAll(() => {
    client = new AgentArtifactsClient(`127.0.0.1:${t.platform.grpcPort}`, grpcCredentials.createInsecure());
  });
  afterAll(() => client?.close());

  const fetch = (archiveId: string, cred: string | null) =>
    new Promise<Buffer>((resolve, reject) => {
      const metadata = new Metadata();
      if (cred) metadata.set('authorization', `Bearer ${cred}`);
      const call = client.fetchArchive({ archiveId }, metadata, { deadline: new Date(Date.now() + 10_000) });
      const chunks: Buffer[] = [];
      call.on('data', (c: { data: Buffer }) => chunks.push(Buffer.from(c.data)));
      call.on('error', reject);
      call.on('end', () => resolve(Buffer.concat(chunks)));
    });
  const codeOf = (p: Promise<unknown>) => p.then(() => 'OK', (e: ServiceError) => status[e.code]);

  /** An archive row and file, as an accepted upload leaves them. */
  async function storedArchive(serverId: string | null, data: Buffer) {
    const app = await dropApp(serverId ? { serverId } : {});
    const id = `arc_${randomBytes(6).toString('hex')}`;
    await t.db.insertInto('applicationArchives').values({ id, applicationId: app.applicationId, format: 'tar.gz', size: data.length, sha256: sha(data) }).execute();
    await mkdir(t.platform.archives.incomingDir, { recursive: true });
    writeFileSync(t.platform.archives.pathOf(id), data, { mode: 0o600 });
    return id;
  }

  it("streams the archive to the agent of the application's server, in chunks", async () => {
    const data = randomBytes(200 * 1024);
    const id = await storedArchive(null, data);
    expect(sha(await fetch(id, credential))).toBe(sha(data));
  });

  it("refuses another server's credential (NOT_FOUND) and unknown credentials (UNAUTHENTICATED)", async () => {
    const server = await t.call('server.create', { name: 'worker', address: '203.0.113.20' });
    expect(server.status, JSON.stringify(server.body)).toBe(200);
    const remote = await storedArchive(server.body.serverId, randomBytes(100));
    // The platform host's agent may not fetch the archive of an application on another server.
    expect(await codeOf(fetch(remote, credential))).toBe('NOT_FOUND');
    expect(await codeOf(fetch('arc_missing', credential))).toBe('NOT_FOUND');
    expect(await codeOf(fetch('../../etc/passwd', credential))).toBe('NOT_FOUND');
    const local = await storedArchive(null, randomBytes(100));
    expect(await codeOf(fetch(local, `wrong-${randomBytes(16).toString('hex')}`))).toBe('UNAUTHENTICATED');
    expect(await codeOf(fetch(local, null))).toBe('UNAUTHENTICATED');
  });
});

describe('removing what holds archives', () => {
  /** A drop application in a fresh project with two uploaded archives; answers their ids. */
  async function appWithArchives(projectName: string) {
    const project = (await t.call('project.create', { name: projectName })).body;
    const environmentId = project.environments[0].environmentId as string;
    const app = await dropApp({ environmentId });
    for (const v of ['one', 'two']) {
      const res = await upload(app.applicationId, await tarGz([{ name: 'index.html', content: v }]));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const ids = (await archiveRows(app.applicationId)).map((r) => r.id);
    for (const id of ids) expect(archiveFiles()).toContain(id);
    return { project, environmentId, app, ids };
  }

  it("project.remove deletes the removed applications' archive files and counts them", async () => {
    const { project, ids } = await appWithArchives('drop-project-going');
    const kept = await appWithArchives('drop-project-staying');
    const res = await t.call('project.remove', { projectId: project.projectId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.removed).toMatchObject({ applications: 1, archives: 2 });
    for (const id of ids) expect(archiveFiles()).not.toContain(id);
    for (const id of kept.ids) expect(archiveFiles()).toContain(id);
  });

  it("environment.remove deletes the removed applications' archive files", async () => {
    const { project, ids } = await appWithArchives('drop-environment-going');
    const other = await t.call('environment.create', { projectId: project.projectId, name: 'other' });
    expect(other.status).toBe(200);
    const res = await t.call('environment.remove', { environmentId: project.environments[0].environmentId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.removed).toMatchObject({ applications: 1, archives: 2 });
    for (const id of ids) expect(archiveFiles()).not.toContain(id);
  });

  it("application.delete deletes the application's archive files once the agent reports it removed", async () => {
    const { app, ids } = await appWithArchives('drop-app-going');
    expect((await t.call('application.delete', { applicationId: app.applicationId })).status).toBe(200);
    const remove = await t.db
      .selectFrom('commands')
      .select('id')
      .where('workloadKey', '=', `application:${app.applicationId}`)
      .where('kind', '=', 'COMMAND_KIND_REMOVE_WORKLOAD')
      .executeTakeFirstOrThrow();
    // Until then the files stay: the application is still there.
    for (const id of ids) expect(archiveFiles()).toContain(id);
    const applied = await t.platform.reports.applyCommandResult('local', {
      commandId: remove.id,
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
      finishedAt: undefined,
    });
    expect(applied).toBe('applied');
    expect(await archiveRows(app.applicationId)).toEqual([]);
    for (const id of ids) expect(archiveFiles()).not.toContain(id);
  });
});
