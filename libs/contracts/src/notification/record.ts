import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** What every notification shows, whatever its channel kind. */
const Common = z.object({
  notificationId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  appBuildError: z.boolean().describe('notify when an application build fails'),
  databaseBackup: z.boolean().describe('notify when a database backup runs'),
  platformBackup: z.boolean().describe('notify when a backup of the platform itself runs'),
  volumeBackup: z.boolean().describe('notify when a volume backup runs'),
  platformRestart: z.boolean().describe('notify when the platform restarts'),
  appDeploy: z.boolean().describe('notify when an application is deployed'),
  containerCleanup: z.boolean().describe('notify when a container cleanup runs'),
  serverThreshold: z.boolean().describe('notify when a server resource threshold is crossed'),
  createdAt: Timestamp,
});

export const HookNotification = Common.extend({
  kind: z.literal('hook').describe('a chat (Slack-style) incoming webhook'),
  hookId: z.string(),
  channel: z.string(),
  hasWebhookUrl: z.boolean().describe('the webhook URL is set (it is write-only: it carries its secret)'),
});

export const MessengerNotification = Common.extend({
  kind: z.literal('messenger').describe('a messenger (Telegram-style) bot'),
  messengerId: z.string(),
  chatId: z.string(),
  messageThreadId: z.string(),
  hasBotToken: z.boolean().describe('the bot token is set (write-only)'),
});

export const CommunityNotification = Common.extend({
  kind: z.literal('community').describe('a community-server (Discord-style) webhook'),
  communityId: z.string(),
  decoration: z.boolean(),
  hasWebhookUrl: z.boolean().describe('the webhook URL is set (it is write-only: it carries its secret)'),
});

export const EmailNotification = Common.extend({
  kind: z.literal('email').describe('email over SMTP'),
  emailId: z.string(),
  smtpServer: z.string(),
  smtpPort: z.number().int(),
  username: z.string(),
  fromAddress: z.string(),
  toAddresses: z.array(z.string()),
  hasPassword: z.boolean().describe('the SMTP password is set (write-only)'),
});

export const PushNotification = Common.extend({
  kind: z.literal('push').describe('a push server (Gotify-style)'),
  pushId: z.string(),
  serverUrl: z.string(),
  priority: z.number().int(),
  decoration: z.boolean(),
  hasAppToken: z.boolean().describe('the application token is set (write-only)'),
});

/**
 * A notification as responses show it: its event flags, its channel kind, the channel's id
 * under the spec's name (`hookId`, `messengerId`, `communityId`, `emailId` or `pushId`) and
 * the channel's settings. Secrets (webhook URLs, bot token, SMTP password, app token) are
 * write-only: `has<Field>` says whether one is set.
 */
export const NotificationRecord = z
  .discriminatedUnion('kind', [HookNotification, MessengerNotification, CommunityNotification, EmailNotification, PushNotification])
  .describe('A notification channel, by kind');
