import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../../testing/harness.js';
import { SMTP_TEST_HOST, sinkResolver, startHttpSink, startSmtpSink } from '../../testing/sinks.js';

let t: TestPlatform;
let sink: Awaited<ReturnType<typeof startHttpSink>>;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
const SMTP_LOGIN = { user: 'alerts', pass: 'smtp-pass-c0nn3ct' };
const BOT_TOKEN = '987654321:AAFtestConnectionBotToken_s3cret';

beforeAll(async () => {
  sink = await startHttpSink();
  smtp = await startSmtpSink(SMTP_LOGIN);
  t = await startTestPlatform({ notifications: { telegramApiUrl: sink.url, smtpCa: smtp.ca, resolver: sinkResolver, httpTimeoutMs: 5000, smtpTimeoutMs: 5000 } });
  t.watch.secret(SMTP_LOGIN.pass);
  t.watch.secret(BOT_TOKEN);
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
  await smtp?.close();
});

const emailInput = (overrides: Record<string, unknown> = {}) => ({
  smtpServer: SMTP_TEST_HOST,
  smtpPort: smtp.port,
  username: SMTP_LOGIN.user,
  password: SMTP_LOGIN.pass,
  fromAddress: 'alerts@example.com',
  toAddresses: ['ops@example.com', 'oncall@example.com'],
  ...overrides,
});

describe('notification.test*Connection', () => {
  it('testHookConnection posts a Slack message to the webhook and answers {}', async () => {
    sink.answer(() => ({ status: 200, body: 'ok' }));
    const before = sink.requests.length;
    const webhookUrl = t.watch.secret(`${sink.url}/services/T1/B1/testHookSecret01`);
    const res = await t.call('notification.testHookConnection', { webhookUrl, channel: '#deploys' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({});
    const req = sink.requests[before]!;
    expect(req.url).toBe('/services/T1/B1/testHookSecret01');
    expect(req.json).toMatchObject({ channel: '#deploys', text: expect.stringContaining('Skiff test message') });
    expect(req.json.blocks[0].type).toBe('section');
  });

  it('testHookConnection answers BAD_REQUEST naming webhookUrl when the hook refuses, without the URL', async () => {
    sink.answer(() => ({ status: 403, body: 'invalid_token' }));
    const webhookUrl = t.watch.secret(`${sink.url}/services/T1/B1/testHookSecret02`);
    const res = await t.call('notification.testHookConnection', { webhookUrl, channel: '' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['webhookUrl']);
    expect(res.body.message).toContain('invalid_token');
    expect(JSON.stringify(res.body)).not.toContain('testHookSecret02');
  });

  it('testMessengerConnection calls the Bot API with the token path; a refused token names botToken', async () => {
    sink.answer(() => ({ status: 200, body: { ok: true, result: { message_id: 1 } } }));
    const before = sink.requests.length;
    const ok = await t.call('notification.testMessengerConnection', { botToken: BOT_TOKEN, chatId: '-1001234567890', messageThreadId: '5' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(sink.requests[before]!.url).toBe(`/bot${BOT_TOKEN}/sendMessage`);
    expect(sink.requests[before]!.json).toMatchObject({ chat_id: '-1001234567890', message_thread_id: 5, parse_mode: 'HTML' });

    sink.answer(() => ({ status: 401, body: { ok: false, error_code: 401, description: 'Unauthorized' } }));
    const refused = await t.call('notification.testMessengerConnection', { botToken: BOT_TOKEN, chatId: '-1001234567890', messageThreadId: '' });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['botToken']);
    expect(JSON.stringify(refused.body)).not.toContain('AAFtestConnectionBotToken');

    const malformed = await t.call('notification.testMessengerConnection', { botToken: 'not-a-token', chatId: '-100', messageThreadId: '' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.issues[0].path).toEqual(['botToken']);
    const chat = await t.call('notification.testMessengerConnection', { botToken: BOT_TOKEN, chatId: 'ops room', messageThreadId: '' });
    expect(chat.body.issues[0].path).toEqual(['chatId']);
  });

  it('testCommunityConnection posts a Discord embed with decoration', async () => {
    sink.answer(() => ({ status: 200, body: { id: '1' } }));
    const before = sink.requests.length;
    const webhookUrl = t.watch.secret(`${sink.url}/api/webhooks/1/testCommunitySecret`);
    const res = await t.call('notification.testCommunityConnection', { webhookUrl, decoration: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(sink.requests[before]!.url).toBe('/api/webhooks/1/testCommunitySecret?wait=true');
    expect(sink.requests[before]!.json).toMatchObject({ embeds: [{ title: 'Skiff test message' }], allowed_mentions: { parse: [] } });
  });

  it('testEmailConnection sends over STARTTLS with the login to every recipient, both parts', async () => {
    const before = smtp.received.length;
    const res = await t.call('notification.testEmailConnection', emailInput());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const mail = smtp.received[before]!;
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe(SMTP_LOGIN.user);
    expect(mail.to).toEqual(['ops@example.com', 'oncall@example.com']);
    expect(mail.parsed.subject).toBe('Skiff test message');
    expect(mail.parsed.text).toContain('This channel is set up');
    expect(mail.parsed.html).toContain('This channel is set up');
  });

  it('testEmailConnection names password when the login is refused, never showing it', async () => {
    const wrong = t.watch.secret('wrong-smtp-password-9');
    const res = await t.call('notification.testEmailConnection', emailInput({ password: wrong }));
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['password']);
    expect(JSON.stringify(res.body)).not.toContain(wrong);
  });

  it('refuses channels pointing at a metadata address, sending nothing', async () => {
    const before = sink.requests.length;
    const hook = await t.call('notification.testHookConnection', { webhookUrl: 'http://169.254.169.254/latest/meta-data', channel: '' });
    expect(hook.status).toBe(400);
    expect(hook.body.issues[0].path).toEqual(['webhookUrl']);
    const email = await t.call('notification.testEmailConnection', emailInput({ smtpServer: '169.254.169.254', smtpPort: 587 }));
    expect(email.status).toBe(400);
    expect(email.body.issues[0].path).toEqual(['smtpServer']);
    const created = await t.call('notification.createEmail', {
      name: 'meta',
      appBuildError: true,
      databaseBackup: false,
      platformBackup: false,
      volumeBackup: false,
      platformRestart: false,
      appDeploy: true,
      containerCleanup: false,
      serverThreshold: false,
      ...emailInput({ smtpServer: 'metadata.google.internal' }),
    });
    expect(created.status).toBe(400);
    expect(created.body.issues[0].path).toEqual(['smtpServer']);
    expect(sink.requests.length).toBe(before);
  });

  it('logs none of the secrets it was given', () => {
    // t.close() checks the log too; this says where a leak would be.
    for (const secret of [SMTP_LOGIN.pass, BOT_TOKEN, 'testHookSecret01', 'testCommunitySecret']) expect(t.logText()).not.toContain(secret);
  });
});
