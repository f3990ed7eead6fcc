/**
 * email: SMTP through nodemailer. Port 465 speaks TLS from the start; any other port must
 * upgrade with STARTTLS before the login (`requireTLS`): the password and the messages never
 * travel in clear. The server's name is resolved and checked by the outbound module first
 * and the connection goes to that checked address, while TLS still verifies the name.
 * nodemailer loads with the first message: an idle control plane does not hold it.
 */
import { isIP } from 'node:net';
import { type OutboundPolicy, OutboundRefused, type Resolver, resolvePinned } from '@skiff/outbound';
import type { ChannelSender, EventMessage } from './channel-sender.js';
import { DeliveryError } from './channel-sender.js';
import { scrub } from './http-post.js';
import { escapeHtml } from './messenger.js';

export interface SmtpLimits {
  /** Which addresses a channel's SMTP server may have (the platform's own SMTP is the operator's: any but link-local and metadata). */
  policy: OutboundPolicy;
  /** Connecting (greeting included) and each wait for the server afterwards. */
  timeoutMs: number;
  /** Certificates trusted beside the system's (PEM), for a server with a private CA. */
  ca?: string;
  resolver?: Resolver;
}

export interface SmtpServer {
  host: string;
  port: number;
  /** TLS from the start (465) rather than STARTTLS. Default: port 465. */
  secure?: boolean;
  username?: string;
  password?: string;
}

export interface Mail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** Makes the same event's retries one message for the recipient's client. */
  messageId?: string;
}

/** Which setting a nodemailer error is about, whether it may pass later, in words without secrets. */
function deliveryErrorOf(error: unknown, secrets: readonly string[]): DeliveryError {
  const e = error as { code?: string; responseCode?: number; command?: string; message?: string };
  const said = scrub(`SMTP: ${e.message ?? String(error)}`, secrets);
  const permanentReply = typeof e.responseCode === 'number' && e.responseCode >= 500;
  switch (e.code) {
    case 'EAUTH':
      return new DeliveryError(said, false, { field: 'password' });
    case 'ENOAUTH':
      return new DeliveryError(said, false, { field: 'username' });
    case 'EENVELOPE':
      return new DeliveryError(said, !permanentReply, { field: /MAIL/i.test(e.command ?? '') ? 'fromAddress' : 'toAddresses' });
    case 'ETLS':
    case 'ENOTLS':
      return new DeliveryError(said, false, { field: 'smtpServer' });
    case 'EMESSAGE':
      return new DeliveryError(said, !permanentReply);
    default:
      // Connection, timeout, socket and DNS errors, 4xx replies: may pass later.
      return new DeliveryError(said, !permanentReply, { field: 'smtpServer' });
  }
}

/** Sends one message; resolves once the server accepted it for every recipient. */
export async function sendSmtp(server: SmtpServer, mail: Mail, limits: SmtpLimits): Promise<void> {
  const secrets = server.password ? [server.password] : [];
  let address: string;
  try {
    address = (await resolvePinned(server.host, server.port, limits.policy, limits.resolver)).addresses[0]!;
  } catch (error) {
    if (error instanceof OutboundRefused) throw new DeliveryError(`SMTP: ${error.message}`, false, { field: 'smtpServer' });
    throw deliveryErrorOf(error, secrets);
  }
  const secure = server.secure ?? server.port === 465;
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    host: address,
    port: server.port,
    secure,
    requireTLS: !secure,
    // TLS checks the certificate against the name the user gave, not the address.
    ...(isIP(server.host) ? {} : { servername: server.host }),
    tls: { minVersion: 'TLSv1.2', ...(limits.ca ? { ca: limits.ca } : {}) },
    auth: server.username ? { user: server.username, pass: server.password ?? '' } : undefined,
    connectionTimeout: limits.timeoutMs,
    greetingTimeout: limits.timeoutMs,
    socketTimeout: limits.timeoutMs,
    dnsTimeout: limits.timeoutMs,
    // Messages are built here from text: nothing is read from files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
    debug: false,
  });
  try {
    await transport.sendMail({ from: mail.from, to: mail.to, subject: mail.subject.replace(/[\r\n]+/g, ' '), text: mail.text, html: mail.html, messageId: mail.messageId });
  } catch (error) {
    throw deliveryErrorOf(error, secrets);
  } finally {
    transport.close();
  }
}

export function eventMail(message: EventMessage): Pick<Mail, 'subject' | 'text' | 'html'> {
  const text = [message.text, '', ...message.fields.map(([label, value]) => `${label}: ${value}`), ...(message.link ? ['', message.link] : []), '', message.occurredAt.toISOString()];
  const rows = message.fields.map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('');
  const link = message.link ? `<p><a href="${escapeHtml(message.link).replace(/"/g, '&quot;')}">Open</a></p>` : '';
  const html =
    `<!doctype html><html><body><h2>${escapeHtml(message.title)}</h2>` +
    `<p>${escapeHtml(message.text).replace(/\n/g, '<br>')}</p>` +
    (rows ? `<table>${rows}</table>` : '') +
    `${link}<p><small>${escapeHtml(message.occurredAt.toISOString())}</small></p></body></html>`;
  return { subject: message.title, text: text.join('\n'), html };
}

/** A Message-ID from the idempotency key (only characters an id may hold). */
export const messageIdOf = (idempotencyKey: string) => `<${idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 200)}@skiff>`;

export const emailSender =
  (limits: SmtpLimits): ChannelSender =>
  async (target, message, options) => {
    const c = target.config;
    await sendSmtp(
      {
        host: String(c.smtpServer ?? ''),
        port: Number(c.smtpPort),
        username: typeof c.username === 'string' && c.username !== '' ? c.username : undefined,
        password: typeof target.secrets.password === 'string' ? target.secrets.password : undefined,
      },
      {
        from: String(c.fromAddress ?? ''),
        to: Array.isArray(c.toAddresses) ? c.toAddresses.map(String) : [],
        ...eventMail(message),
        messageId: messageIdOf(options.idempotencyKey),
      },
      limits,
    );
  };
