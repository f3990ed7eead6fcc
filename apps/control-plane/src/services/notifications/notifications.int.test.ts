import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

const flags = {
  appBuildError: true,
  databaseBackup: false,
  platformBackup: true,
  volumeBackup: false,
  platformRestart: true,
  appDeploy: true,
  containerCleanup: false,
  serverThreshold: true,
};

interface Kind {
  kind: string;
  op: string;
  idField: string;
  input: Record<string, unknown>;
  /** What the record shows of the settings. */
  shown: Record<string, unknown>;
  secret: { field: string; value: string; flag: string };
  change: Record<string, unknown>;
}

const KINDS: Kind[] = [
  {
    kind: 'hook',
    op: 'Hook',
    idField: 'hookId',
    input: { webhookUrl: 'https://hooks.example.com/services/T0/B0/hook-secret-1', channel: '#ops' },
    shown: { channel: '#ops' },
    secret: { field: 'webhookUrl', value: 'hook-secret-1', flag: 'hasWebhookUrl' },
    change: { channel: '#alerts' },
  },
  {
    kind: 'messenger',
    op: 'Messenger',
    idField: 'messengerId',
    input: { botToken: '123456:messenger-secret-2', chatId: '-100123', messageThreadId: '' },
    shown: { chatId: '-100123', messageThreadId: '' },
    secret: { field: 'botToken', value: 'messenger-secret-2', flag: 'hasBotToken' },
    change: { chatId: '-100999', messageThreadId: '7' },
  },
  {
    kind: 'community',
    op: 'Community',
    idField: 'communityId',
    input: { webhookUrl: 'https://community.example.com/api/webhooks/1/community-secret-3', decoration: true },
    shown: { decoration: true },
    secret: { field: 'webhookUrl', value: 'community-secret-3', flag: 'hasWebhookUrl' },
    change: { decoration: false },
  },
  {
    kind: 'email',
    op: 'Email',
    idField: 'emailId',
    input: {
      smtpServer: 'smtp.example.com',
      smtpPort: 587,
      username: 'alerts',
      password: 'email-secret-4',
      fromAddress: 'alerts@example.com',
      toAddresses: ['ops@example.com'],
    },
    shown: { smtpServer: 'smtp.example.com', smtpPort: 587, username: 'alerts', fromAddress: 'alerts@example.com', toAddresses: ['ops@example.com'] },
    secret: { field: 'password', value: 'email-secret-4', flag: 'hasPassword' },
    change: { smtpPort: 465, toAddresses: ['ops@example.com', 'oncall@example.com'] },
  },
  {
    kind: 'push',
    op: 'Push',
    idField: 'pushId',
    input: { serverUrl: 'https://push.example.com', appToken: 'push-secret-5', priority: 5, decoration: false },
    shown: { serverUrl: 'https://push.example.com', priority: 5, decoration: false },
    secret: { field: 'appToken', value: 'push-secret-5', flag: 'hasAppToken' },
    change: { priority: 9, serverUrl: 'http://push.internal:8080' },
  },
];

const create = async (k: Kind, overrides: Record<string, unknown> = {}, call = t.call) => {
  const res = await call(`notification.create${k.op}`, { ...flags, name: `ops-${k.kind}`, ...k.input, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const rowOf = (id: string) => t.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe.each(KINDS)('$kind notifications', (k) => {
  it('creates, reads back, lists, updates and removes', async () => {
    const created = await create(k);
    expect(created).toMatchObject({ kind: k.kind, name: `ops-${k.kind}`, organizationId: t.organizationId, ...flags, ...k.shown, [k.secret.flag]: true });
    expect(created.notificationId).toMatch(/^ntf_/);
    expect(typeof created[k.idField]).toBe('string');
    expect((await t.call('notification.one', { notificationId: created.notificationId })).body).toEqual(created);
    const all = (await t.call('notification.all')).body;
    expect(all).toContainEqual(created);

    const updated = await t.call(`notification.update${k.op}`, {
      notificationId: created.notificationId,
      [k.idField]: created[k.idField],
      appDeploy: false,
      name: `renamed-${k.kind}`,
      ...k.change,
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    // Only the fields given change.
    expect(updated.body).toEqual({ ...created, ...k.change, appDeploy: false, name: `renamed-${k.kind}` });
    expect((await t.call('notification.one', { notificationId: created.notificationId })).body).toEqual(updated.body);

    const removed = await t.call('notification.remove', { notificationId: created.notificationId });
    expect(removed.status).toBe(200);
    expect(removed.body.notificationId).toBe(created.notificationId);
    expect((await t.call('notification.one', { notificationId: created.notificationId })).status).toBe(404);
    expect((await t.call('notification.remove', { notificationId: created.notificationId })).status).toBe(404);
  });

  it('keeps its secret write-only and encrypted at rest, and replaces it on update', async () => {
    const created = await create(k);
    expect(JSON.stringify(created)).not.toContain(k.secret.value);
    expect(created).not.toHaveProperty(k.secret.field);
    const listed = (await t.call('notification.all')).body;
    expect(JSON.stringify(listed)).not.toContain(k.secret.value);
    const row = await rowOf(created.notificationId);
    expect(JSON.stringify(row)).not.toContain(k.secret.value);
    expect(JSON.parse(t.platform.secrets.open(row.secrets))[k.secret.field]).toBe(k.input[k.secret.field]);

    // A Telegram token keeps Telegram's form (<bot id>:<secret>).
    const fresh = k.secret.field.endsWith('Url') ? 'https://hooks.example.com/rotated-secret' : k.kind === 'messenger' ? '123:rotated-secret' : 'rotated-secret';
    const updated = await t.call(`notification.update${k.op}`, {
      notificationId: created.notificationId,
      [k.idField]: created[k.idField],
      [k.secret.field]: fresh,
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(JSON.stringify(updated.body)).not.toContain('rotated-secret');
    const after = await rowOf(created.notificationId);
    expect(JSON.stringify(after)).not.toContain('rotated-secret');
    expect(JSON.parse(t.platform.secrets.open(after.secrets))[k.secret.field]).toBe(fresh);
  });

  it('refuses a channel id that is not this notification’s, changing nothing', async () => {
    const a = await create(k);
    const b = await create(k);
    const swapped = await t.call(`notification.update${k.op}`, { notificationId: a.notificationId, [k.idField]: b[k.idField], name: 'x' });
    expect(swapped.status).toBe(400);
    expect(swapped.body.issues[0].path).toEqual([k.idField]);
    const unknown = await t.call(`notification.update${k.op}`, { notificationId: a.notificationId, [k.idField]: 'zzz_missing', name: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toEqual([k.idField]);
    const missing = await t.call(`notification.update${k.op}`, { notificationId: 'ntf_missing', [k.idField]: a[k.idField], name: 'x' });
    expect(missing.status).toBe(404);
    expect((await t.call('notification.one', { notificationId: a.notificationId })).body).toEqual(a);
  });
});

describe('notification channel ids across kinds and organizations', () => {
  it('refuses the id of another kind’s channel, naming the field of this kind', async () => {
    const hook = await create(KINDS[0]!);
    const messenger = await create(KINDS[1]!);
    // A messenger notification updated as a hook, even with its own channel id.
    const asHook = await t.call('notification.updateHook', { notificationId: messenger.notificationId, hookId: messenger.messengerId, channel: '#x' });
    expect(asHook.status).toBe(400);
    expect(asHook.body.issues[0].path).toEqual(['hookId']);
    const asMessenger = await t.call('notification.updateMessenger', { notificationId: hook.notificationId, messengerId: hook.hookId, chatId: '1' });
    expect(asMessenger.status).toBe(400);
    expect(asMessenger.body.issues[0].path).toEqual(['messengerId']);
  });

  it('takes organizationId only when it is the caller’s', async () => {
    const hook = await create(KINDS[0]!);
    const own = await t.call('notification.updateHook', { notificationId: hook.notificationId, hookId: hook.hookId, organizationId: t.organizationId, channel: '#own' });
    expect(own.status).toBe(200);
    const other = await t.call('notification.updateHook', { notificationId: hook.notificationId, hookId: hook.hookId, organizationId: 'org_other', channel: '#other' });
    expect(other.status).toBe(400);
    expect(other.body.issues[0].path).toEqual(['organizationId']);
    expect((await t.call('notification.one', { notificationId: hook.notificationId })).body.channel).toBe('#own');
  });
});

describe('notification validation', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['Hook', 'webhookUrl', { webhookUrl: 'ftp://hooks.example.com/x' }],
    ['Hook', 'webhookUrl', { webhookUrl: 'not a url' }],
    ['Hook', 'webhookUrl', { webhookUrl: 'http://169.254.169.254/latest/meta-data' }],
    ['Hook', 'webhookUrl', { webhookUrl: 'http://metadata.google.internal/computeMetadata' }],
    ['Community', 'webhookUrl', { webhookUrl: 'javascript:alert(1)' }],
    ['Community', 'webhookUrl', { webhookUrl: 'http://[fe80::1]/hook' }],
    ['Push', 'serverUrl', { serverUrl: 'push.example.com' }],
    ['Push', 'serverUrl', { serverUrl: 'http://2852039166/' }],
    ['Push', 'priority', { priority: 0 }],
    ['Push', 'priority', { priority: 11 }],
    ['Push', 'priority', { priority: 2.5 }],
    ['Email', 'smtpPort', { smtpPort: 0 }],
    ['Email', 'smtpPort', { smtpPort: 65536 }],
    ['Email', 'smtpPort', { smtpPort: 25.5 }],
    ['Email', 'fromAddress', { fromAddress: 'alerts' }],
    ['Email', 'toAddresses', { toAddresses: ['ops@example.com', 'not-an-email'] }],
    ['Email', 'toAddresses', { toAddresses: [] }],
    ['Messenger', 'chatId', { chatId: '' }],
  ];

  it.each(cases)('refuses a bad %s %s on create and update, changing nothing', async (op, field, bad) => {
    const k = KINDS.find((x) => x.op === op)!;
    const before = (await t.call('notification.all')).body.length;
    const created = await t.call(`notification.create${op}`, { ...flags, name: 'bad', ...k.input, ...bad });
    expect(created.status, JSON.stringify(created.body)).toBe(400);
    expect(created.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
    expect((await t.call('notification.all')).body.length).toBe(before);

    const good = await create(k);
    const updated = await t.call(`notification.update${op}`, { notificationId: good.notificationId, [k.idField]: good[k.idField], ...bad });
    expect(updated.status).toBe(400);
    expect(updated.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
    expect((await t.call('notification.one', { notificationId: good.notificationId })).body).toEqual(good);
  });

  it('accepts private and loopback targets (the operator’s own services)', async () => {
    await create(KINDS[0]!, { webhookUrl: 'http://127.0.0.1:9000/hook' });
    await create(KINDS[4]!, { serverUrl: 'http://10.0.0.5' });
  });

  it('refuses Telegram settings it could never send with (the token goes into a URL path)', async () => {
    const k = KINDS[1]!;
    for (const [field, bad] of [['botToken', '1:../../x'], ['chatId', 'ops room'], ['messageThreadId', 'general']] as const) {
      const res = await t.call('notification.createMessenger', { ...flags, name: 'bad', ...k.input, [field]: bad });
      expect(res.status).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
    }
    const good = await create(k);
    const res = await t.call('notification.updateMessenger', { notificationId: good.notificationId, messengerId: good.messengerId, chatId: '#x' });
    expect(res.body.issues[0].path).toEqual(['chatId']);
  });
});

describe('notification permissions', () => {
  it('lets admins manage channels, members only read them', async () => {
    const admin = t.as((await addMember(t, 'notify-admin@example.com', 'admin')).key);
    const member = t.as((await addMember(t, 'notify-member@example.com')).key);
    const k = KINDS[0]!;
    const byAdmin = await create(k, {}, admin);
    expect((await admin('notification.updateHook', { notificationId: byAdmin.notificationId, hookId: byAdmin.hookId, channel: '#a' })).status).toBe(200);

    expect((await member('notification.createHook', { ...flags, name: 'm', ...k.input })).status).toBe(403);
    expect((await member('notification.updateHook', { notificationId: byAdmin.notificationId, hookId: byAdmin.hookId, channel: '#m' })).status).toBe(403);
    expect((await member('notification.remove', { notificationId: byAdmin.notificationId })).status).toBe(403);
    expect((await member('notification.testHookConnection', { webhookUrl: 'https://hooks.example.com/x', channel: '#x' })).status).toBe(403);
    const seen = await member('notification.one', { notificationId: byAdmin.notificationId });
    expect(seen.status).toBe(200);
    expect(seen.body.channel).toBe('#a');
    expect(JSON.stringify(seen.body)).not.toContain('hook-secret-1');
    expect((await member('notification.all')).body.map((n: { notificationId: string }) => n.notificationId)).toContain(byAdmin.notificationId);

    expect((await admin('notification.remove', { notificationId: byAdmin.notificationId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization and lists only its own', async () => {
    const mine = await create(KINDS[3]!);
    const org = (await t.call('organization.create', { name: 'Notify Elsewhere' })).body;
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('notification.one', { notificationId: mine.notificationId })).status).toBe(404);
    expect((await outsider('notification.updateEmail', { notificationId: mine.notificationId, emailId: mine.emailId, smtpPort: 25 })).status).toBe(404);
    expect((await outsider('notification.remove', { notificationId: mine.notificationId })).status).toBe(404);
    expect((await outsider('notification.all')).body).toEqual([]);
    const theirs = await create(KINDS[3]!, {}, outsider);
    expect(theirs.organizationId).toBe(org.organizationId);
    expect((await t.call('notification.one', { notificationId: theirs.notificationId })).status).toBe(404);
    // Their channel id does not unlock our notification, nor ours theirs.
    const crossed = await t.call('notification.updateEmail', { notificationId: mine.notificationId, emailId: theirs.emailId, smtpPort: 25 });
    expect(crossed.status).toBe(400);
    expect((await t.call('notification.one', { notificationId: mine.notificationId })).body).toEqual(mine);
  });
});
