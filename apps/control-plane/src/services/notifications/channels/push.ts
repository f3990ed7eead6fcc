/**
 * push: a Gotify server, `POST {serverUrl}/message` with the application token in the
 * `X-Gotify-Key` header (never in the query string, where proxies log it). With decoration the
 * message is Markdown (`extras.client::display.contentType`).
 */
import type { ChannelSender, EventMessage } from './channel-sender.js';
import { cut, type HttpLimits, postJson, refusal } from './http-post.js';
import { trimChar } from '@skiff/domain';

export function gotifyPayload(message: EventMessage, priority: number, decoration: boolean) {
  const lines = decoration
    ? [message.text, '', ...message.fields.map(([label, value]) => `**${label}:** ${value}`), ...(message.link ? ['', `[Open](${message.link})`] : [])]
    : [message.text, ...message.fields.map(([label, value]) => `${label}: ${value}`), ...(message.link ? [message.link] : [])];
  return {
    title: cut(message.title, 250),
    message: cut(lines.join('\n'), 10_000),
    priority,
    ...(decoration ? { extras: { 'client::display': { contentType: 'text/markdown' } } } : {}),
  };
}

/** `{serverUrl}/message`, keeping a path the server is mounted under. */
function messageUrl(serverUrl: string): string {
  const url = URL.parse(serverUrl);
  if (!url) return serverUrl;
  url.pathname = `${trimChar(url.pathname, '/', 'end')}/message`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

export const pushSender =
  (limits: HttpLimits): ChannelSender =>
  async (target, message, options) => {
    const serverUrl = String(target.config.serverUrl ?? '');
    const appToken = String(target.secrets.appToken ?? '');
    const priority = typeof target.config.priority === 'number' ? target.config.priority : 5;
    const secrets = [appToken];
    const answer = await postJson(messageUrl(serverUrl), gotifyPayload(message, priority, target.config.decoration === true), {
      limits,
      service: 'the Gotify server',
      field: 'serverUrl',
      secrets,
      headers: { 'x-gotify-key': appToken, 'idempotency-key': options.idempotencyKey },
      signal: options.signal,
    });
    if (answer.status >= 200 && answer.status < 300) return;
    const error = refusal(answer, 'the Gotify server', 'serverUrl', secrets);
    // Gotify answers 401 or 403 to a wrong token; 404 means no Gotify at that URL.
    if (answer.status === 401 || answer.status === 403) error.details.field = 'appToken';
    throw error;
  };
