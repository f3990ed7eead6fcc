import type { NotificationKind } from '@skiff/db';
import type { OutboundPolicy, Resolver } from '@skiff/outbound';
import type { ChannelSender } from './channel-sender.js';
import { communitySender } from './community.js';
import { emailSender } from './email.js';
import { hookSender } from './hook.js';
import { messengerSender } from './messenger.js';
import { pushSender } from './push.js';

export { type ChannelSender, type ChannelTarget, DeliveryError, type EventKind, type EventMessage } from './channel-sender.js';
export { type Mail, sendSmtp, type SmtpServer } from './email.js';
export { messengerSettingsProblem } from './messenger.js';

export const TELEGRAM_API_URL = 'https://api.telegram.org';

export interface ChannelOptions {
  /** Which addresses channels may reach (`SKIFF_OUTBOUND_ALLOW_PRIVATE`); link-local and metadata never. */
  policy: OutboundPolicy;
  /** For one HTTP request (resolve, connect, send, read). Default 10 s. */
  httpTimeoutMs?: number;
  /** The largest answer read from a service. Default 64 KiB. */
  maxAnswerBytes?: number;
  /** For each SMTP step (connect and greeting, then each reply). Default 15 s. */
  smtpTimeoutMs?: number;
  /** PEM certificates trusted beside the system's for SMTP (`SKIFF_SMTP_CA_FILE`). */
  smtpCa?: string;
  /** The Telegram Bot API's base URL (`SKIFF_TELEGRAM_API_URL`; default https://api.telegram.org). */
  telegramApiUrl?: string;
  resolver?: Resolver;
}

/** One sender per channel kind, each speaking its service's wire format. */
export function channelSenders(options: ChannelOptions): Record<NotificationKind, ChannelSender> {
  const http = {
    policy: options.policy,
    timeoutMs: options.httpTimeoutMs ?? 10_000,
    maxBytes: options.maxAnswerBytes ?? 64 * 1024,
    resolver: options.resolver,
  };
  // The operator named the Bot API's address: it may be on a private network (a local Bot API server).
  const telegram = options.telegramApiUrl ? { ...http, policy: { allowPrivate: true } } : http;
  return {
    hook: hookSender(http),
    messenger: messengerSender(telegram, options.telegramApiUrl ?? TELEGRAM_API_URL),
    community: communitySender(http),
    email: emailSender({ policy: options.policy, timeoutMs: options.smtpTimeoutMs ?? 15_000, ca: options.smtpCa, resolver: options.resolver }),
    push: pushSender(http),
  };
}

/** SMTP settings of the email sender, for the invitations sent through the same limits. */
export function smtpLimits(options: ChannelOptions) {
  return { policy: options.policy, timeoutMs: options.smtpTimeoutMs ?? 15_000, ca: options.smtpCa, resolver: options.resolver };
}
