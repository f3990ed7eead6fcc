import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Command } from '@skiff/proto';
import { addMember, type Call, otherOrganization, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

/** Issue 13, "A compose stack is root on the host": the platform host refuses host privileges unless trusted. */
let t: TestPlatform;
let env: string;
let organizationId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'host-privileges' })).body;
  env = project.environments[0].environmentId;
  organizationId = (await t.db.selectFrom('members').select('organizationId').where('platformAdmin', '=', true).executeTakeFirstOrThrow()).organizationId;
});
afterAll(() => t?.close());

const PRIVILEGED = 'services:\n  web:\n    image: nginx\n    privileged: true\n';
const SOCKET = 'services:\n  agent:\n    image: portainer/agent\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n';
const HARMLESS = 'services:\n  web:\n    image: nginx\n    cap_drop: [ALL]\n    network_mode: bridge\n    env_file: .env\n    volumes:\n      - ./data:/data\n      - cache:/cache\nvolumes:\n  cache: {}\n';

const refused = (res: { status: number; body: any }, service: string, key: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  expect(res.body.issues[0].path).toEqual(['composeFile']);
  expect(res.body.message).toContain(`composeFile: service "${service}": ${key} is not allowed on this server`);
};

const trust = (call: Call, id: string, trusted: boolean) => call('settings.trustOrganization', { organizationId: id, trusted });

describe('host privileges on the platform host', () => {
  it('are refused on create and update, naming composeFile, the service and the key; harmless files pass', async () => {
    refused(await t.call('compose.create', { name: 'p', environmentId: env, composeFile: PRIVILEGED }), 'web', 'privileged');
    refused(await t.call('compose.create', { name: 's', environmentId: env, composeFile: SOCKET }), 'agent', 'volumes');
    const ok = await t.call('compose.create', { name: 'h', environmentId: env, composeFile: HARMLESS });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    refused(await t.call('compose.update', { composeId: ok.body.composeId, composeFile: PRIVILEGED }), 'web', 'privileged');
    expect((await t.call('compose.one', { composeId: ok.body.composeId })).body.composeFile).toBe(HARMLESS);
  });

  it('are refused on compose.import too, naming base64 and the service; nothing is stored', async () => {
    const stack = await t.call('compose.create', { name: 'imported', environmentId: env });
    const base64 = Buffer.from(JSON.stringify({ compose: SOCKET, config: '' })).toString('base64');
    const res = await t.call('compose.import', { composeId: stack.body.composeId, base64 });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.issues[0].path).toEqual(['base64']);
    expect(res.body.message).toContain('service "agent": volumes is not allowed on this server (the Docker socket)');
    expect((await t.call('compose.one', { composeId: stack.body.composeId })).body.composeFile).toBe('');
  });

  it('are accepted once a platform administrator trusts the organization, and refused again at deploy once trust is taken back', async () => {
    expect((await trust(t.call, organizationId, true)).body).toEqual({ organizationId, trusted: true });
    const created = await t.call('compose.create', { name: 'trusted', environmentId: env, composeFile: PRIVILEGED });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const updated = await t.call('compose.update', { composeId: created.body.composeId, composeFile: SOCKET });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);

    expect((await trust(t.call, organizationId, false)).body).toEqual({ organizationId, trusted: false });
    refused(await t.call('compose.deploy', { composeId: created.body.composeId }), 'agent', 'volumes');
    expect(await t.db.selectFrom('deployments').select('id').where('composeId', '=', created.body.composeId).execute()).toEqual([]);
  });

  it('trust is per organization: another organization is still refused', async () => {
    await trust(t.call, organizationId, true);
    try {
      const other = await otherOrganization(t);
      const project = (await other('project.create', { name: 'other' })).body;
      refused(await other('compose.create', { name: 'x', environmentId: project.environments[0].environmentId, composeFile: PRIVILEGED }), 'web', 'privileged');
    } finally {
      await trust(t.call, organizationId, false);
    }
  });

  it('only a platform administrator may trust an organization', async () => {
    const admin = await addMember(t, 'org-admin-hp@example.com', 'admin');
    const res = await trust(t.as(admin.key), organizationId, true);
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    const row = await t.db.selectFrom('organizations').select('trustedOnPlatformHost').where('id', '=', organizationId).executeTakeFirstOrThrow();
    expect(row.trustedOnPlatformHost).toBe(false);
    expect((await trust(t.call, 'org_nope', true)).status).toBe(404);
  });

  it('a git source, whose file the agent fetches, is deployed with allow_host_privileges only when the organization is trusted', async () => {
    const created = await t.call('compose.create', { name: 'from git', environmentId: env, sourceType: 'git' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { composeId } = created.body;
    const updated = await t.call('compose.update', { composeId, customGitUrl: 'https://git.example.com/acme/stack.git', customGitBranch: 'main' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const flags = async () => {
      const rows = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${composeId}`).execute();
      return rows
        .sort((a, b) => Number(a.position) - Number(b.position))
        .map((row) => Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload)))
        .map((c) => (c.payload?.$case === 'deployCompose' ? c.payload.value.allowHostPrivileges : null));
    };
    expect((await t.call('compose.deploy', { composeId })).status).toBe(200);
    await trust(t.call, organizationId, true);
    try {
      expect((await t.call('compose.deploy', { composeId })).status).toBe(200);
    } finally {
      await trust(t.call, organizationId, false);
    }
    expect(await flags()).toEqual([false, true]);
  });
});
