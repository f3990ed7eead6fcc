// The surfaces added with forges, push-to-deploy, database dumps and restores, as an owner of
// another organization sees them: every id of organization A given to organization B's calls
// answers exactly as a missing id does (NOT_FOUND for the record an operation is about,
// BAD_REQUEST naming the field, in the same words, for a reference), and nothing changes.
import { serve } from '@hono/node-server';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureFor } from '../services/webhooks/index.js';
import { startTestPlatform, type TestPlatform, type Call } from '../testing/harness.js';
import { S3_ACCESS_KEY, startS3 } from '../testing/s3-server.js';

const BUCKET = 'skiff-cross-org';
const S3_SECRET = 'cross-org-s3-secret-0001';
const WEBHOOK_SECRET = 'cross-org-webhook-secret-1';
const FORGE_TOKEN = 'cross-org-forge-token-0001';

let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
let server: ReturnType<typeof serve>;
let base: string;
let outsider: Call;
/** Organization A's records. */
const a: Record<string, string> = {};
/** Organization B's records of the same kinds. */
const b: Record<string, string> = {};

const ok = async (call: Call, op: string, input?: Record<string, unknown>) => {
  const res = await call(op, input);
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** Records one of each kind in an organization. */
async function populate(call: Call, into: Record<string, string>, tag: string) {
  const userId = (await ok(call, 'user.get')).userId;
  const env = (await ok(call, 'project.create', { name: `cross-${tag}` })).environments[0].environmentId;
  into.environmentId = env;
  const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeA = await ok(call, 'forgeA.create', {
    name: `gh-${tag}`, authId: userId, appName: `app-${tag}`, appId: 1, clientId: 'Iv1.x', clientSecret: 'cs', installationId: '1', privateKey,
    webhookSecret: `${WEBHOOK_SECRET}-${tag}`,
  });
  into.forgeAId = forgeA.forgeAId;
  const forgeD = await ok(call, 'forgeD.create', { name: `gt-${tag}`, authId: userId, forgeDUrl: 'https://git.example.com', accessToken: `${FORGE_TOKEN}-${tag}` });
  into.forgeDId = forgeD.forgeDId;
  into.gitProviderId = forgeD.gitProviderId;
  const app = await ok(call, 'application.create', { name: `app-${tag}`, environmentId: env });
  into.applicationId = app.applicationId;
  await ok(call, 'application.saveForgeAProvider', { applicationId: app.applicationId, forgeAId: forgeA.forgeAId, owner: 'acme', repository: 'shared', branch: 'main', buildPath: '/' });
  const compose = await ok(call, 'compose.create', { name: `stack-${tag}`, environmentId: env });
  into.composeId = compose.composeId;
  const db = await ok(call, 'dbA.create', { name: `pg-${tag}`, environmentId: env });
  into.dbAId = db.dbAId;
  await t.db.updateTable('databaseServices').set({ applicationStatus: 'done' }).where('id', '=', db.dbAId).execute();
  const destination = await ok(call, 'destination.create', { name: `s3-${tag}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET });
  into.destinationId = destination.destinationId;
  const backup = await ok(call, 'backup.create', { schedule: '0 3 * * *', prefix: `${tag}/`, destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: db.dbAId, keepLatestCount: null });
  into.backupId = backup.backupId;
  into.key = `${tag}/${backup.backupId}/2026-12-07T14-00-00-000Z.dump.gz`;
  const restore = await ok(call, 'backup.restore', { backupId: backup.backupId, key: into.key, force: true });
  into.restoreId = restore.restoreId;
  into.previewDeploymentId = `prv_cross_${tag}`;
  await t.db
    .insertInto('previewDeployments')
    .values({ id: into.previewDeploymentId, applicationId: app.applicationId, appName: `preview-${tag}`, branch: 'pr', pullRequestId: '1', pullRequestNumber: '1', pullRequestUrl: 'https://git.example.com/pr/1', pullRequestTitle: 'PR' })
    .execute();
}

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  t = await startTestPlatform();
  for (const s of [S3_SECRET, WEBHOOK_SECRET, FORGE_TOKEN]) t.watch.secret(s);
  server = serve({ fetch: t.platform.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const other = await ok(t.call, 'organization.create', { name: 'Organization B' });
  const key = (await ok(t.call, 'user.createApiKey', { name: 'b', metadata: { organizationId: other.organizationId } })).key;
  outsider = t.as(t.watch.secret(key));
  await populate(t.call, a, 'a');
  await populate(outsider, b, 'b');
}, 60_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
  await s3?.close();
});

/** A's id and a missing one answer B alike: same status, same code and message, same issues. */
async function sameAsMissing(op: string, input: (id: string) => Record<string, unknown>, id: string, missing: string) {
  const theirs = await outsider(op, input(id));
  const none = await outsider(op, input(missing));
  expect(theirs.status, `${op} ${JSON.stringify(theirs.body)}`).toBeGreaterThanOrEqual(400);
  expect(theirs.status, `${op} ${JSON.stringify(theirs.body)}`).toBeLessThan(500);
  expect({ status: theirs.status, code: theirs.body.code, message: theirs.body.message, issues: theirs.body.issues }, op).toEqual({
    status: none.status, code: none.body.code, message: none.body.message, issues: none.body.issues,
  });
  return theirs;
}

const snapshot = async () => ({
  applications: await t.db.selectFrom('applications').selectAll().orderBy('id').execute(),
  composeStacks: await t.db.selectFrom('composeStacks').selectAll().orderBy('id').execute(),
  backups: await t.db.selectFrom('backups').selectAll().orderBy('id').execute(),
  restores: await t.db.selectFrom('databaseRestores').selectAll().orderBy('id').execute(),
  previews: await t.db.selectFrom('previewDeployments').selectAll().orderBy('id').execute(),
  providers: await t.db.selectFrom('gitProviders').selectAll().orderBy('id').execute(),
  commands: (await t.db.selectFrom('commands').select('id').execute()).length,
  deliveries: (await t.db.selectFrom('webhookDeliveries').select('id').execute()).length,
});

describe('another organization on the new surfaces', () => {
  it('reads, changes and triggers nothing of A through the records an operation is about', async () => {
    const before = await snapshot();
    const cases: Array<[string, (id: string) => Record<string, unknown>, string]> = [
      ['application.refreshToken', (id) => ({ applicationId: id }), a.applicationId!],
      ['application.webhookDeliveries', (id) => ({ applicationId: id }), a.applicationId!],
      ['compose.refreshToken', (id) => ({ composeId: id }), a.composeId!],
      ['compose.webhookDeliveries', (id) => ({ composeId: id }), a.composeId!],
      ['application.saveForgeAProvider', (id) => ({ applicationId: id, forgeAId: b.forgeAId, owner: 'acme', repository: 'shared', branch: 'main', buildPath: '/' }), a.applicationId!],
      ['application.disconnectGitProvider', (id) => ({ applicationId: id }), a.applicationId!],
      ['forgeA.one', (id) => ({ forgeAId: id }), a.forgeAId!],
      ['forgeA.getForgeARepositories', (id) => ({ forgeAId: id }), a.forgeAId!],
      ['forgeA.getForgeABranches', (id) => ({ forgeAId: id, owner: 'acme', repo: 'shared' }), a.forgeAId!],
      ['forgeA.testConnection', (id) => ({ forgeAId: id }), a.forgeAId!],
      ['forgeD.one', (id) => ({ forgeDId: id }), a.forgeDId!],
      ['forgeD.getForgeDRepositories', (id) => ({ forgeDId: id }), a.forgeDId!],
      ['forgeD.testConnection', (id) => ({ forgeDId: id }), a.forgeDId!],
      ['forgeD.update', (id) => ({ forgeDId: id, forgeDUrl: 'https://git.example.com', gitProviderId: a.gitProviderId, name: 'stolen' }), a.forgeDId!],
      ['gitProvider.remove', (id) => ({ gitProviderId: id }), a.gitProviderId!],
      ['backup.one', (id) => ({ backupId: id }), a.backupId!],
      ['backup.manualBackupDbA', (id) => ({ backupId: id }), a.backupId!],
      ['backup.manualBackupDbE', (id) => ({ backupId: id }), a.backupId!],
      ['backup.restore', (id) => ({ backupId: id, key: a.key, force: true }), a.backupId!],
      ['backup.oneRestore', (id) => ({ restoreId: id }), a.restoreId!],
      ['backup.listBackupFiles', (id) => ({ destinationId: id, search: '' }), a.destinationId!],
      ['destination.one', (id) => ({ destinationId: id }), a.destinationId!],
      ['destination.remove', (id) => ({ destinationId: id }), a.destinationId!],
      ['previewDeployment.all', (id) => ({ applicationId: id }), a.applicationId!],
      ['previewDeployment.one', (id) => ({ previewDeploymentId: id }), a.previewDeploymentId!],
      ['previewDeployment.delete', (id) => ({ previewDeploymentId: id }), a.previewDeploymentId!],
    ];
    for (const [op, input, id] of cases) {
      const answer = await sameAsMissing(op, input, id, `${id.split('_')[0]}_missing0000`);
      expect(answer.status, op).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses A\u2019s records named in B\u2019s own records as it refuses missing ones, naming the field', async () => {
    const before = await snapshot();
    const cases: Array<[string, (id: string) => Record<string, unknown>, string, string]> = [
      // A's forge connection on B's application (its credentials would clone for B).
      ['application.saveForgeAProvider', (id) => ({ applicationId: b.applicationId, forgeAId: id, owner: 'acme', repository: 'shared', branch: 'main', buildPath: '/' }), a.forgeAId!, 'forgeAId'],
      ['application.saveForgeDProvider', (id) => ({ applicationId: b.applicationId, forgeDId: id, forgeDOwner: 'acme', forgeDRepository: 'shared', forgeDBranch: 'main', forgeDBuildPath: '/' }), a.forgeDId!, 'forgeDId'],
      // B's backup of A's database, or to A's destination.
      ['backup.create', (id) => ({ schedule: '0 3 * * *', prefix: 'x/', destinationId: b.destinationId, database: 'app', databaseType: 'dbA', dbAId: id, keepLatestCount: null }), a.dbAId!, 'dbAId'],
      ['backup.create', (id) => ({ schedule: '0 3 * * *', prefix: 'x/', destinationId: id, database: 'app', databaseType: 'dbA', dbAId: b.dbAId, keepLatestCount: null }), a.destinationId!, 'destinationId'],
      ['backup.update', (id) => ({ backupId: b.backupId, destinationId: id, schedule: '0 3 * * *', enabled: true, prefix: 'b/', database: 'app', keepLatestCount: null, serviceName: null, metadata: null, databaseType: 'dbA' }), a.destinationId!, 'destinationId'],
      // A's file restored into B's database: the key is outside B's backup.
      ['backup.restore', (key) => ({ backupId: b.backupId, key, force: true }), a.key!, 'key'],
      // B's file restored into A's database.
      ['backup.restore', (id) => ({ backupId: b.backupId, key: b.key, databaseId: id, force: true }), a.dbAId!, 'databaseId'],
    ];
    for (const [op, input, id, field] of cases) {
      const missing = field === 'key' ? `b/${b.backupId}/../../a/${a.backupId}/x.dump.gz` : `${id.split('_')[0]}_missing0000`;
      const answer = await sameAsMissing(op, input, id, missing);
      expect(answer.status, op).toBe(400);
      expect(answer.body.issues.map((i: { path: string[] }) => i.path[0]), op).toEqual([field]);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('lists nothing of A: lists of B hold only B\u2019s records', async () => {
    expect((await ok(outsider, 'forgeA.forgeAProviders')).map((r: { forgeAId: string }) => r.forgeAId)).toEqual([b.forgeAId]);
    expect((await ok(outsider, 'destination.all')).map((r: { destinationId: string }) => r.destinationId)).toEqual([b.destinationId]);
    expect((await ok(outsider, 'previewDeployment.all', { applicationId: b.applicationId })).map((r: { previewDeploymentId: string }) => r.previewDeploymentId)).toEqual([b.previewDeploymentId]);
  });

  it('a GitHub delivery signed with B\u2019s App secret reaches none of A\u2019s workloads building the same repository', async () => {
    const before = await snapshot();
    const body = JSON.stringify({
      ref: 'refs/heads/main', after: 'a'.repeat(40), repository: { full_name: 'acme/shared', name: 'shared', owner: { login: 'acme' } }, head_commit: { id: 'a'.repeat(40) }, commits: [],
    });
    const res = await fetch(`${base}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'cross-org-1', 'x-hub-signature-256': signatureFor('github', `${WEBHOOK_SECRET}-b`, body) },
      body,
    });
    const answer = (await res.json()) as { results: Array<{ id: string }> };
    expect(res.status).toBe(200);
    expect(answer.results.map((r) => r.id)).toEqual([b.applicationId]);
    // B's own application deploys (and, without an agent, fails: its status changes when that ends).
    const notB = (rows: { id: string }[]) => rows.filter((r) => r.id !== b.applicationId);
    expect(notB((await snapshot()).applications)).toEqual(notB(before.applications));
    expect(notB(before.applications).map((r) => r.id)).toContain(a.applicationId);
    expect((await ok(t.call, 'application.webhookDeliveries', { applicationId: a.applicationId })).deliveries).toEqual([]);
  });

  it('the generic route: B\u2019s token on A\u2019s id answers as a missing id does', async () => {
    const bToken = (await ok(outsider, 'application.refreshToken', { applicationId: b.applicationId })) as Record<string, unknown>;
    const token = String((await ok(outsider, 'application.one', { applicationId: b.applicationId })).refreshToken ?? bToken.refreshToken ?? '');
    expect(token).not.toBe('');
    t.watch.secret(token);
    const post = (id: string) => fetch(`${base}/webhooks/deploy/application/${id}/${token}`, { method: 'POST', body: '{}' });
    const theirs = await post(a.applicationId!);
    const missing = await post('app_missing0000');
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    const strip = (x: any) => ({ code: x.code, message: x.message, issues: x.issues });
    expect(strip(await theirs.json())).toEqual(strip(await missing.json()));
    expect((await ok(t.call, 'application.webhookDeliveries', { applicationId: a.applicationId })).deliveries).toEqual([]);
  });
});
