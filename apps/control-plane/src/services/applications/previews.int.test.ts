import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
let projectId: string;
let n = 0;

beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'previews' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const createApp = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('application.create', { name: `web ${++n}`, environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { applicationId: string; appName: string };
};

/** A preview as the forge webhooks will insert them (nothing in the API creates one). */
const insertPreview = async (applicationId: string, pr: number, createdAt = new Date()) => {
  const id = `pvw_${++n}`;
  await t.db
    .insertInto('previewDeployments')
    .values({
      id,
      applicationId,
      appName: `preview-web-${String(n).padStart(6, '0')}`,
      branch: `feature/${pr}`,
      pullRequestId: String(1000 + pr),
      pullRequestNumber: String(pr),
      pullRequestUrl: `https://git.example.com/shop/pull/${pr}`,
      pullRequestTitle: `Feature ${pr}`,
      createdAt,
    })
    .execute();
  return id;
};

describe('preview deployment records', () => {
  it('lists the previews of an application, newest first, and reads one with its domains', async () => {
    const { applicationId } = await createApp();
    const older = await insertPreview(applicationId, 1, new Date(Date.now() - 60_000));
    const newer = await insertPreview(applicationId, 2);
    const otherApp = await createApp();
    await insertPreview(otherApp.applicationId, 3);

    const domain = await t.call('domain.create', { host: 'pr-2.preview.example.com', previewDeploymentId: newer });
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    expect(domain.body).toMatchObject({ domainType: 'preview', previewDeploymentId: newer, applicationId: null, serverId: null, port: 3000 });

    const all = await t.call('previewDeployment.all', { applicationId });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.map((p: { previewDeploymentId: string }) => p.previewDeploymentId)).toEqual([newer, older]);
    const one = await t.call('previewDeployment.one', { previewDeploymentId: newer });
    expect(one.body).toMatchObject({
      previewDeploymentId: newer,
      applicationId,
      branch: 'feature/2',
      pullRequestNumber: '2',
      pullRequestTitle: 'Feature 2',
      previewStatus: 'idle',
      domains: [domain.body],
    });
    expect(one.body).toEqual(all.body[0]);
    expect((await t.call('domain.one', { domainId: domain.body.domainId })).body).toEqual(domain.body);
    // A preview's domains are its own, not its application's.
    expect((await t.call('domain.byApplicationId', { applicationId })).body).toEqual([]);
  });

  it('gives a preview domain the server of its application', async () => {
    const serverId = `srv_${++n}`;
    await t.db.insertInto('servers').values({ id: serverId, organizationId: t.organizationId, name: 'remote', address: '93.184.216.34' }).execute();
    const { applicationId } = await createApp({ serverId });
    const preview = await insertPreview(applicationId, 4);
    const domain = await t.call('domain.create', { host: 'pr-4.preview.example.com', previewDeploymentId: preview, domainType: 'preview' });
    expect(domain.body.serverId).toBe(serverId);
    const wrongType = await t.call('domain.create', { host: 'pr-4b.preview.example.com', previewDeploymentId: preview, domainType: 'application' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.issues[0].path).toEqual(['domainType']);
    expect((await t.call('domain.create', { host: 'x.preview.example.com', previewDeploymentId: 'pvw_missing' })).status).toBe(404);
  });

  it('deletes a preview with its domains, and an application with its previews', async () => {
    const { applicationId } = await createApp();
    const preview = await insertPreview(applicationId, 5);
    const domain = (await t.call('domain.create', { host: 'pr-5.preview.example.com', previewDeploymentId: preview })).body;
    const deleted = await t.call('previewDeployment.delete', { previewDeploymentId: preview });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ previewDeploymentId: preview, domains: [domain] });
    expect((await t.call('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(404);
    expect((await t.call('domain.one', { domainId: domain.domainId })).status).toBe(404);

    const again = await insertPreview(applicationId, 6);
    await t.call('domain.create', { host: 'pr-6.preview.example.com', previewDeploymentId: again });
    expect((await t.call('application.delete', { applicationId })).status).toBe(200);
    expect(await t.db.selectFrom('previewDeployments').select('id').where('applicationId', '=', applicationId).execute()).toEqual([]);
    expect(await t.db.selectFrom('domains').select('id').where('previewDeploymentId', '=', again).execute()).toEqual([]);
  });

  it('answers NOT_FOUND for unknown previews and applications', async () => {
    expect((await t.call('previewDeployment.one', { previewDeploymentId: 'pvw_missing' })).status).toBe(404);
    expect((await t.call('previewDeployment.delete', { previewDeploymentId: 'pvw_missing' })).status).toBe(404);
    expect((await t.call('previewDeployment.all', { applicationId: 'app_missing' })).status).toBe(404);
  });
});

describe('preview deployment permissions', () => {
  it("follows access to the application for members; admins reach everything", async () => {
    const { applicationId } = await createApp();
    const preview = await insertPreview(applicationId, 7);
    const member = await addMember(t, 'dev@example.com');
    const admin = await addMember(t, 'admin@example.com', 'admin');
    const m = t.as(member.key);
    expect((await m('previewDeployment.all', { applicationId })).status).toBe(403);
    expect((await m('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(403);
    expect((await m('previewDeployment.delete', { previewDeploymentId: preview })).status).toBe(403);
    expect((await m('domain.create', { host: 'pr-7.preview.example.com', previewDeploymentId: preview })).status).toBe(403);
    expect((await t.as(admin.key)('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(200);

    await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [applicationId] });
    expect((await m('previewDeployment.all', { applicationId })).body).toHaveLength(1);
    expect((await m('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(200);
    expect((await m('domain.create', { host: 'pr-7.preview.example.com', previewDeploymentId: preview })).status).toBe(200);
    expect((await m('previewDeployment.delete', { previewDeploymentId: preview })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization', async () => {
    const { applicationId } = await createApp();
    const preview = await insertPreview(applicationId, 8);
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('previewDeployment.all', { applicationId })).status).toBe(404);
    expect((await outsider('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(404);
    expect((await outsider('previewDeployment.delete', { previewDeploymentId: preview })).status).toBe(404);
    expect((await outsider('domain.create', { host: 'pr-8.preview.example.com', previewDeploymentId: preview })).status).toBe(404);
    expect((await t.call('previewDeployment.one', { previewDeploymentId: preview })).status).toBe(200);
  });
});
