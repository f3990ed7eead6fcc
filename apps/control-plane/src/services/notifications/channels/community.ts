/**
 * community: a Discord webhook. `content` (plain, at most 2000 characters), or with
 * decoration one embed (title, description, colour by outcome, fields, timestamp, link).
 * `allowed_mentions: {parse: []}` keeps an event's text from pinging @everyone, roles or
 * users; `?wait=true` makes Discord answer only once the message is posted.
 */
import type { ChannelSender, EventMessage } from './channel-sender.js';
import { DeliveryError } from './channel-sender.js';
import { cut, type HttpLimits, parseJson, postJson, refusal } from './http-post.js';

const COLOURS = { success: 0x2eb67d, failure: 0xe01e5a, info: 0x4a90d9 } as const;

export function discordPayload(message: EventMessage, decoration: boolean) {
  const noMentions = { allowed_mentions: { parse: [] as string[] } };
  if (!decoration) {
    const lines = [`**${message.title}**`, message.text, ...message.fields.map(([label, value]) => `${label}: ${value}`)];
    if (message.link) lines.push(message.link);
    return { content: cut(lines.join('\n'), 2000), ...noMentions };
  }
  const embed: Record<string, unknown> = {
    title: cut(message.title, 256),
    description: cut(message.text, 4096),
    color: COLOURS[message.outcome],
    fields: message.fields.slice(0, 25).map(([name, value]) => ({ name: cut(name, 256), value: cut(value || '-', 1024), inline: true })),
    timestamp: message.occurredAt.toISOString(),
  };
  if (message.link) embed.url = message.link;
  return { embeds: [embed], ...noMentions };
}

/** The webhook URL with `wait=true` added to what its query already has (a `thread_id`…). */
function waiting(webhookUrl: string): string {
  const url = URL.parse(webhookUrl);
  if (!url) return webhookUrl;
  url.searchParams.set('wait', 'true');
  return url.toString();
}

export const communitySender =
  (limits: HttpLimits): ChannelSender =>
  async (target, message, options) => {
    const webhookUrl = String(target.secrets.webhookUrl ?? '');
    const secrets = [webhookUrl];
    const answer = await postJson(waiting(webhookUrl), discordPayload(message, target.config.decoration === true), {
      limits,
      service: 'the Discord webhook',
      field: 'webhookUrl',
      secrets,
      headers: { 'idempotency-key': options.idempotencyKey },
      signal: options.signal,
    });
    if (answer.status >= 200 && answer.status < 300) return;
    const error = refusal(answer, 'the Discord webhook', 'webhookUrl', secrets);
    if (answer.status === 429) {
      // Discord says how long in the body too, in seconds (fractional).
      const after = (parseJson(answer) as { retry_after?: unknown } | undefined)?.retry_after;
      if (typeof after === 'number' && after >= 0) throw new DeliveryError(error.message, true, { retryAfterMs: Math.ceil(after * 1000) });
    }
    throw error;
  };
