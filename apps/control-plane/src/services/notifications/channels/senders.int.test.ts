import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTP_TEST_HOST, sinkResolver, startHttpSink, startSmtpSink } from '../../../testing/sinks.js';
import { type ChannelTarget, DeliveryError, type EventMessage } from './channel-sender.js';
import { channelSenders } from './index.js';

type Sink = Awaited<ReturnType<typeof startHttpSink>>;
let sink: Sink;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let senders: ReturnType<typeof channelSenders>;

const SMTP_LOGIN = { user: 'alerts', pass: 'smtp-pass-7f3a9c' };
const BOT_TOKEN = '123456789:AAHsecretBotTokenValue_xyz';

beforeAll(async () => {
  sink = await startHttpSink();
  smtp = await startSmtpSink(SMTP_LOGIN);
  senders = channelSenders({ policy: { allowPrivate: true }, telegramApiUrl: sink.url, smtpCa: smtp.ca, httpTimeoutMs: 5000, smtpTimeoutMs: 5000, resolver: sinkResolver });
});
afterAll(async () => {
  await sink?.close();
  await smtp?.close();
});

const message: EventMessage = {
  kind: 'appBuildError',
  title: 'Deploy failed: shop <web> & co',
  text: 'Build failed: <script>alert(1)</script> @everyone',
  outcome: 'failure',
  fields: [
    ['Project', 'shop'],
    ['Deployment', 'dpl_1'],
  ],
  link: 'https://skiff.example.com/deployments/dpl_1?a=1&b=2',
  occurredAt: new Date('2026-12-03T02:00:00Z'),
};

const target = (kind: ChannelTarget['kind'], config: Record<string, unknown>, secrets: Record<string, unknown>): ChannelTarget => ({
  notificationId: 'ntf_1',
  kind,
  config,
  secrets,
});

const send = (t: ChannelTarget) => senders[t.kind](t, message, { idempotencyKey: 'evt_1:ntf_1' });

async function failure(promise: Promise<void>): Promise<DeliveryError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe('hook (Slack incoming webhook)', () => {
  it('posts text and mrkdwn blocks with the channel, escaping &, < and >', async () => {
    sink.answer(() => ({ status: 200, body: 'ok' }));
    const before = sink.requests.length;
    await send(target('hook', { channel: '#ops' }, { webhookUrl: `${sink.url}/services/T0/B0/hookSecret123` }));
    const req = sink.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/services/T0/B0/hookSecret123');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['idempotency-key']).toBe('evt_1:ntf_1');
    expect(req.json.channel).toBe('#ops');
    expect(req.json.text).toBe('Deploy failed: shop &lt;web&gt; &amp; co: Build failed: &lt;script&gt;alert(1)&lt;/script&gt; @everyone');
    expect(req.json.blocks[0]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: '*Deploy failed: shop &lt;web&gt; &amp; co*\nBuild failed: &lt;script&gt;alert(1)&lt;/script&gt; @everyone' },
    });
    expect(req.json.blocks[1].fields).toEqual([
      { type: 'mrkdwn', text: '*Project*\nshop' },
      { type: 'mrkdwn', text: '*Deployment*\ndpl_1' },
    ]);
    expect(req.json.blocks[2].elements[0].text).toContain('<https://skiff.example.com/deployments/dpl_1?a=1&amp;b=2|Open>');
    expect(JSON.stringify(req.json)).not.toMatch(/<script>/);
  });

  it('leaves out an empty channel, and names channel when Slack does not know it', async () => {
    sink.answer(() => ({ status: 404, body: 'channel_not_found' }));
    const before = sink.requests.length;
    const error = await failure(send(target('hook', { channel: '' }, { webhookUrl: `${sink.url}/services/T0/B0/hookSecret456` })));
    expect(sink.requests[before]!.json).not.toHaveProperty('channel');
    expect(error.retryable).toBe(false);
    expect(error.details.field).toBe('channel');
  });

  it('does not follow a redirect, and never prints the webhook URL', async () => {
    sink.answer((req) => ({ status: 301, headers: { location: `https://elsewhere.example.com${req.url}` } }));
    const error = await failure(send(target('hook', { channel: '' }, { webhookUrl: `${sink.url}/services/T0/B0/hookSecret789xyz` })));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('redirect');
    expect(error.message).not.toContain('hookSecret789xyz');
  });

  it('refuses a webhook at a metadata address without connecting', async () => {
    const error = await failure(send(target('hook', { channel: '' }, { webhookUrl: 'http://169.254.169.254/latest/hookSecretMeta' })));
    expect(error.retryable).toBe(false);
    expect(error.details.field).toBe('webhookUrl');
    expect(error.message).not.toContain('hookSecretMeta');
  });

  it('retries what may pass later (429, 5xx)', async () => {
    sink.answer(() => ({ status: 503, body: 'busy' }));
    expect((await failure(send(target('hook', {}, { webhookUrl: `${sink.url}/h/secretpath1` })))).retryable).toBe(true);
    sink.answer(() => ({ status: 429, body: 'rate_limited', headers: { 'retry-after': '30' } }));
    const limited = await failure(send(target('hook', {}, { webhookUrl: `${sink.url}/h/secretpath1` })));
    expect(limited.retryable).toBe(true);
    expect(limited.details.retryAfterMs).toBe(30_000);
  });
});

describe('messenger (Telegram Bot API)', () => {
  it('calls sendMessage on the bot token path, HTML-escaped, with the topic', async () => {
    sink.answer(() => ({ status: 200, body: { ok: true, result: { message_id: 7, chat: { id: -100123 } } } }));
    const before = sink.requests.length;
    await send(target('messenger', { chatId: '-100123', messageThreadId: '42' }, { botToken: BOT_TOKEN }));
    const req = sink.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe(`/bot${BOT_TOKEN}/sendMessage`);
    expect(req.json).toMatchObject({ chat_id: '-100123', message_thread_id: 42, parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
    expect(req.json.text).toBe(
      '<b>Deploy failed: shop &lt;web&gt; &amp; co</b>\nBuild failed: &lt;script&gt;alert(1)&lt;/script&gt; @everyone\n\n' +
        '<b>Project:</b> shop\n<b>Deployment:</b> dpl_1\n\n<a href="https://skiff.example.com/deployments/dpl_1?a=1&amp;b=2">Open</a>',
    );
    await send(target('messenger', { chatId: '@ops_channel', messageThreadId: '' }, { botToken: BOT_TOKEN }));
    expect(sink.requests[before + 1]!.json).not.toHaveProperty('message_thread_id');
  });

  it('maps Telegram refusals: 401 names botToken and is final, 429 waits retry_after', async () => {
    sink.answer(() => ({ status: 401, body: { ok: false, error_code: 401, description: 'Unauthorized' } }));
    const refused = await failure(send(target('messenger', { chatId: '-100123', messageThreadId: '' }, { botToken: BOT_TOKEN })));
    expect(refused.retryable).toBe(false);
    expect(refused.details.field).toBe('botToken');
    expect(refused.message).toContain('Unauthorized');
    expect(refused.message).not.toContain('AAHsecretBotTokenValue');

    sink.answer(() => ({ status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } }));
    const chat = await failure(send(target('messenger', { chatId: '-100999', messageThreadId: '' }, { botToken: BOT_TOKEN })));
    expect([chat.retryable, chat.details.field]).toEqual([false, 'chatId']);

    sink.answer(() => ({ status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } }));
    const limited = await failure(send(target('messenger', { chatId: '-100123', messageThreadId: '' }, { botToken: BOT_TOKEN })));
    expect(limited.retryable).toBe(true);
    expect(limited.details.retryAfterMs).toBe(3000);
  });

  it('refuses a token that is not of Telegram’s form before any request', async () => {
    const before = sink.requests.length;
    const error = await failure(send(target('messenger', { chatId: '-100123', messageThreadId: '' }, { botToken: '1:../../evil' })));
    expect([error.retryable, error.details.field]).toEqual([false, 'botToken']);
    expect(sink.requests.length).toBe(before);
  });
});

describe('community (Discord webhook)', () => {
  it('posts content with no mentions allowed, waiting for the message', async () => {
    sink.answer(() => ({ status: 200, body: { id: '1', channel_id: '2', content: 'x' } }));
    const before = sink.requests.length;
    await send(target('community', { decoration: false }, { webhookUrl: `${sink.url}/api/webhooks/123/discordSecretToken?thread_id=9` }));
    const req = sink.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/api/webhooks/123/discordSecretToken?thread_id=9&wait=true');
    expect(req.json).toEqual({
      content: '**Deploy failed: shop <web> & co**\nBuild failed: <script>alert(1)</script> @everyone\nProject: shop\nDeployment: dpl_1\nhttps://skiff.example.com/deployments/dpl_1?a=1&b=2',
      allowed_mentions: { parse: [] },
    });
  });

  it('posts an embed with decoration', async () => {
    sink.answer(() => ({ status: 204 }));
    const before = sink.requests.length;
    await send(target('community', { decoration: true }, { webhookUrl: `${sink.url}/api/webhooks/123/discordSecretToken` }));
    const req = sink.requests[before]!;
    expect(req.json.allowed_mentions).toEqual({ parse: [] });
    expect(req.json.embeds).toEqual([
      {
        title: 'Deploy failed: shop <web> & co',
        description: 'Build failed: <script>alert(1)</script> @everyone',
        color: 0xe01e5a,
        fields: [
          { name: 'Project', value: 'shop', inline: true },
          { name: 'Deployment', value: 'dpl_1', inline: true },
        ],
        timestamp: '2026-12-03T02:00:00.000Z',
        url: 'https://skiff.example.com/deployments/dpl_1?a=1&b=2',
      },
    ]);
  });

  it('maps an unknown webhook to webhookUrl and a 429 to its retry_after, without the token', async () => {
    sink.answer((req) => ({ status: 404, body: { message: `Unknown Webhook ${req.url}`, code: 10015 } }));
    const unknown = await failure(send(target('community', { decoration: false }, { webhookUrl: `${sink.url}/api/webhooks/123/discordSecretToken` })));
    expect([unknown.retryable, unknown.details.field]).toEqual([false, 'webhookUrl']);
    expect(unknown.message).not.toContain('discordSecretToken');
    sink.answer(() => ({ status: 429, body: { message: 'You are being rate limited.', retry_after: 1.5, global: false } }));
    const limited = await failure(send(target('community', { decoration: false }, { webhookUrl: `${sink.url}/api/webhooks/123/discordSecretToken` })));
    expect([limited.retryable, limited.details.retryAfterMs]).toEqual([true, 1500]);
  });
});

describe('push (Gotify)', () => {
  it('posts /message with the token in X-Gotify-Key, the priority and Markdown extras', async () => {
    sink.answer(() => ({ status: 200, body: { id: 1, appid: 1, message: 'x', title: 'y', priority: 8, date: '2026-12-03T02:00:00Z' } }));
    const before = sink.requests.length;
    await send(target('push', { serverUrl: `${sink.url}/gotify/`, priority: 8, decoration: true }, { appToken: 'AbCdEfGotifyToken' }));
    const req = sink.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/gotify/message');
    expect(req.headers['x-gotify-key']).toBe('AbCdEfGotifyToken');
    expect(req.json).toEqual({
      title: 'Deploy failed: shop <web> & co',
      message: 'Build failed: <script>alert(1)</script> @everyone\n\n**Project:** shop\n**Deployment:** dpl_1\n\n[Open](https://skiff.example.com/deployments/dpl_1?a=1&b=2)',
      priority: 8,
      extras: { 'client::display': { contentType: 'text/markdown' } },
    });
    await send(target('push', { serverUrl: sink.url, priority: 3, decoration: false }, { appToken: 'AbCdEfGotifyToken' }));
    expect(sink.requests[before + 1]!.url).toBe('/message');
    expect(sink.requests[before + 1]!.json).not.toHaveProperty('extras');
  });

  it('names appToken when Gotify refuses it', async () => {
    sink.answer(() => ({ status: 401, body: { error: 'Unauthorized', errorCode: 401, errorDescription: 'you need to provide a valid access token or user credentials to access this api' } }));
    const error = await failure(send(target('push', { serverUrl: sink.url, priority: 5, decoration: false }, { appToken: 'AbCdEfGotifyToken' })));
    expect([error.retryable, error.details.field]).toEqual([false, 'appToken']);
    expect(error.message).not.toContain('AbCdEfGotifyToken');
  });
});

describe('email (SMTP)', () => {
  const settings = (overrides: Record<string, unknown> = {}) => ({
    smtpServer: SMTP_TEST_HOST,
    smtpPort: smtp.port,
    username: SMTP_LOGIN.user,
    fromAddress: 'alerts@example.com',
    toAddresses: ['ops@example.com', 'oncall@example.com'],
    ...overrides,
  });

  it('sends over STARTTLS with a login, to every recipient, with a text and an HTML part', async () => {
    const before = smtp.received.length;
    await send(target('email', settings(), { password: SMTP_LOGIN.pass }));
    const mail = smtp.received[before]!;
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe(SMTP_LOGIN.user);
    expect(mail.from).toBe('alerts@example.com');
    expect(mail.to).toEqual(['ops@example.com', 'oncall@example.com']);
    expect(mail.parsed.subject).toBe('Deploy failed: shop <web> & co');
    expect(mail.parsed.text).toContain('Build failed: <script>alert(1)</script> @everyone');
    expect(mail.parsed.text).toContain('Project: shop');
    expect(mail.parsed.html).toContain('Build failed: &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.parsed.html).not.toContain('<script>');
    expect(mail.raw).toMatch(/Content-Type: text\/plain/i);
    expect(mail.raw).toMatch(/Content-Type: text\/html/i);
    expect(mail.parsed.messageId).toBe('<evt_1-ntf_1@skiff>');
  });

  it('names the password when the login is refused, without it', async () => {
    const error = await failure(send(target('email', settings(), { password: 'wrong-password-123' })));
    expect([error.retryable, error.details.field]).toEqual([false, 'password']);
    expect(error.message).not.toContain('wrong-password-123');
  });

  it('refuses an SMTP server at a metadata or link-local address', async () => {
    for (const host of ['169.254.169.254', 'metadata.google.internal', '169.254.10.1']) {
      const error = await failure(send(target('email', settings({ smtpServer: host, smtpPort: 587 }), { password: SMTP_LOGIN.pass })));
      expect([error.retryable, error.details.field]).toEqual([false, 'smtpServer']);
    }
  });

  it('refuses loopback when private addresses are not allowed', async () => {
    const strict = channelSenders({ policy: { allowPrivate: false }, smtpCa: smtp.ca, resolver: sinkResolver });
    const error = await failure(strict.email(target('email', settings(), { password: SMTP_LOGIN.pass }), message, { idempotencyKey: 'k' }));
    expect(error.details.field).toBe('smtpServer');
    const hook = await failure(strict.hook(target('hook', {}, { webhookUrl: `${sink.url}/h/x` }), message, { idempotencyKey: 'k' }));
    expect(hook.retryable).toBe(false);
  });
});
