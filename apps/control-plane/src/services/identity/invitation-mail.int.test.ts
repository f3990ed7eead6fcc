import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../../testing/harness.js';
import { SMTP_TEST_HOST, sinkResolver, startSmtpSink } from '../../testing/sinks.js';

let t: TestPlatform;
let platformSmtp: TestPlatform;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
const SMTP_LOGIN = { user: 'invites', pass: 'smtp-pass-1nv1te' };

const flags = {
  appBuildError: false,
  databaseBackup: false,
  platformBackup: false,
  volumeBackup: false,
  platformRestart: false,
  appDeploy: false,
  containerCleanup: false,
  serverThreshold: false,
};

beforeAll(async () => {
  smtp = await startSmtpSink(SMTP_LOGIN);
  const notifications = { smtpCa: smtp.ca, resolver: sinkResolver, smtpTimeoutMs: 5000 };
  t = await startTestPlatform({ notifications });
  platformSmtp = await startTestPlatform({
    notifications: { ...notifications, platformSmtp: { server: { host: SMTP_TEST_HOST, port: smtp.port, secure: false, ...{ username: SMTP_LOGIN.user, password: SMTP_LOGIN.pass } }, from: 'skiff@example.com' } },
  });
  for (const p of [t, platformSmtp]) p.watch.secret(SMTP_LOGIN.pass);
});
afterAll(async () => {
  await t?.close();
  await platformSmtp?.close();
  await smtp?.close();
});

const invite = async (p: TestPlatform, email: string) => {
  const res = await p.call('organization.inviteMember', { email, role: 'member' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  p.watch.secret(res.body.token);
  return res.body as { invitationId: string; token: string };
};

const tokenIn = (text: string) => /sit_[A-Za-z0-9_-]+/.exec(text)?.[0];

describe('user.sendInvitation', () => {
  it('emails the invitee alone, through the email channel, a fresh token that replaces the one answered', async () => {
    const channel = await t.call('notification.createEmail', {
      ...flags,
      name: 'invites',
      smtpServer: SMTP_TEST_HOST,
      smtpPort: smtp.port,
      username: SMTP_LOGIN.user,
      password: SMTP_LOGIN.pass,
      fromAddress: 'team@example.com',
      toAddresses: ['ops@example.com'],
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    const invitation = await invite(t, 'newcomer@example.com');
    const before = smtp.received.length;
    const sent = await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: channel.body.notificationId });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toEqual({});

    const mail = smtp.received[before]!;
    expect(mail.secure).toBe(true);
    expect(mail.from).toBe('team@example.com');
    // The channel's own recipients get nothing: the token goes to the invited address only.
    expect(mail.to).toEqual(['newcomer@example.com']);
    expect(mail.parsed.text).toContain('organization.acceptInvitation');
    const token = tokenIn(mail.parsed.text ?? '')!;
    expect(token).toBeDefined();
    expect(mail.parsed.html).toContain(token);
    t.watch.secret(token);
    expect(token).not.toBe(invitation.token);

    // The token the inviter saw no longer works; the emailed one does.
    expect((await t.as(null)('organization.acceptInvitation', { token: invitation.token })).status).toBe(401);
    const accepted = await t.as(null)('organization.acceptInvitation', { token, name: 'Newcomer' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    t.watch.secret(accepted.body.apiKey.key);
    // Spent: sending again is refused naming the invitation.
    const again = await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: channel.body.notificationId });
    expect(again.status).toBe(400);
    expect(again.body.issues[0].path).toEqual(['invitationId']);
  });

  it('refuses a channel that is not email, an unknown one, and the platform SMTP when none is set', async () => {
    const invitation = await invite(t, 'second@example.com');
    const hook = await t.call('notification.createHook', { ...flags, name: 'h', webhookUrl: 'https://hooks.example.com/services/x', channel: '' });
    const notEmail = await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: hook.body.notificationId });
    expect(notEmail.status).toBe(400);
    expect(notEmail.body.issues[0].path).toEqual(['notificationId']);
    expect((await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: 'ntf_missing' })).status).toBe(404);
    const none = await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: 'platform' });
    expect(none.status).toBe(400);
    expect(none.body.issues[0].path).toEqual(['notificationId']);
    expect(none.body.message).toContain('SKIFF_SMTP_URL');
    // Nothing changed: the answered token still works.
    expect((await t.call('user.getUserByToken', { token: invitation.token })).status).toBe(200);
  });

  it('a failed send leaves the answered token working and names the channel', async () => {
    const channel = await t.call('notification.createEmail', {
      ...flags,
      name: 'broken',
      smtpServer: SMTP_TEST_HOST,
      smtpPort: smtp.port,
      username: SMTP_LOGIN.user,
      password: 'not-the-password',
      fromAddress: 'team@example.com',
      toAddresses: ['ops@example.com'],
    });
    const invitation = await invite(t, 'third@example.com');
    const res = await t.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: channel.body.notificationId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['notificationId']);
    expect(JSON.stringify(res.body)).not.toContain('not-the-password');
    expect((await t.call('user.getUserByToken', { token: invitation.token })).status).toBe(200);
  });

  it('sends through the operator’s SMTP with notificationId "platform"', async () => {
    const invitation = await invite(platformSmtp, 'via-platform@example.com');
    const before = smtp.received.length;
    const res = await platformSmtp.call('user.sendInvitation', { invitationId: invitation.invitationId, notificationId: 'platform' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const mail = smtp.received[before]!;
    expect([mail.from, mail.to, mail.secure]).toEqual(['skiff@example.com', ['via-platform@example.com'], true]);
    platformSmtp.watch.secret(tokenIn(mail.parsed.text ?? '')!);
  });
});
