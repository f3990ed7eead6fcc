// Names that pass the checks when saved but resolve to the cloud metadata address when the
// call is made: every outbound call a user's settings direct (forges' APIs, AI providers,
// notification channels) resolves again, and is refused before anything is sent.
import { generateKeyPairSync } from 'node:crypto';
import { systemResolver } from '@skiff/outbound';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

/** Saved as a name; at connect time it answers 169.254.169.254. */
const REBOUND = 'api.rebind.skiff.test';
const resolver = async (host: string) => (host === REBOUND ? ['169.254.169.254'] : systemResolver(host));

let t: TestPlatform;
let ownerId: string;
beforeAll(async () => {
  t = await startTestPlatform({
    forges: { resolver, timeoutMs: 5000 },
    ai: { resolver },
    notifications: { resolver, httpTimeoutMs: 5000, smtpTimeoutMs: 5000 },
  });
  ownerId = (await t.call('user.get')).body.userId;
});
afterAll(() => t?.close());

const refusedAt = (res: { status: number; body: any }, field: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.issues[0].path[0]).toBe(field);
  expect(JSON.stringify(res.body)).toMatch(/169\.254\.169\.254|link-local|metadata/);
};

describe('a name resolving to the metadata address when the call is made', () => {
  it('forges: forgeA and forgeC apiUrl, forgeBUrl, forgeDUrl are saved, then refused at testConnection and listings', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const created = {
      forgeA: await t.call('forgeA.create', {
        name: 'GHE', authId: ownerId, appName: 'skiff', appId: 1, clientId: 'Iv1.x', clientSecret: 'cs-rebind-1', installationId: '42',
        privateKey: rsa, webhookSecret: 'wh-rebind-1', apiUrl: `https://${REBOUND}/api/v3`,
      }),
      forgeB: await t.call('forgeB.create', { name: 'GL', authId: ownerId, forgeBUrl: `https://${REBOUND}`, accessToken: 'gl-rebind-1', groupName: 'acme' }),
      forgeC: await t.call('forgeC.create', { name: 'BB', authId: ownerId, forgeCUsername: 'u', appPassword: 'bb-rebind-1', forgeCWorkspaceName: 'acme', apiUrl: `https://${REBOUND}/2.0` }),
      forgeD: await t.call('forgeD.create', { name: 'Gitea', authId: ownerId, forgeDUrl: `https://${REBOUND}`, accessToken: 'gt-rebind-1', organizationName: 'acme' }),
    };
    for (const [kind, res] of Object.entries(created)) {
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).toBe(200);
      const id = res.body[`${kind}Id`];
      refusedAt(await t.call(`${kind}.testConnection`, { [`${kind}Id`]: id }), `${kind}Id`);
      const listing = { forgeA: 'getForgeARepositories', forgeB: 'getForgeBRepositories', forgeC: 'getForgeCRepositories', forgeD: 'getForgeDRepositories' }[kind];
      refusedAt(await t.call(`${kind}.${listing}`, { [`${kind}Id`]: id }), `${kind}Id`);
    }
  });

  it('AI: getModels is refused naming apiUrl', async () => {
    refusedAt(await t.call('ai.getModels', { apiUrl: `https://${REBOUND}/v1`, apiKey: 'sk-rebind-1' }), 'apiUrl');
  });

  it('notification channels: a hook, a community webhook and an SMTP server', async () => {
    refusedAt(await t.call('notification.testHookConnection', { webhookUrl: `https://${REBOUND}/hook`, channel: '#ops' }), 'webhookUrl');
    refusedAt(await t.call('notification.testCommunityConnection', { webhookUrl: `https://${REBOUND}/api/webhooks/1/x` }), 'webhookUrl');
    refusedAt(
      await t.call('notification.testEmailConnection', {
        smtpServer: REBOUND, smtpPort: 587, username: 'u', password: 'smtp-rebind-1', toAddresses: ['ops@example.com'], fromAddress: 'alerts@example.com',
      }),
      'smtpServer',
    );
  });
});
