/**
 * hook: a Slack-compatible incoming webhook. The message is `text` (the fallback shown in
 * notifications) and `blocks` (a header section, the fields, a link), in mrkdwn, where `&`,
 * `<` and `>` are escaped so an event's text cannot form a link or a mention.
 */
import type { ChannelSender, EventMessage } from './channel-sender.js';
import { cut, type HttpLimits, postJson, refusal } from './http-post.js';

export const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A link in mrkdwn: `<url|label>`; the URL may not hold `|` or `>` unescaped. */
const mrkdwnLink = (url: string, label: string) => `<${escapeMrkdwn(url).replace(/\|/g, '%7C')}|${escapeMrkdwn(label)}>`;

export function slackPayload(message: EventMessage, channel: string) {
  const headline = `*${escapeMrkdwn(message.title)}*`;
  const body = escapeMrkdwn(message.text);
  const blocks: Record<string, unknown>[] = [{ type: 'section', text: { type: 'mrkdwn', text: cut(`${headline}\n${body}`, 3000) } }];
  // A section takes at most 10 fields of 2000 characters.
  const fields = message.fields.slice(0, 10).map(([label, value]) => ({ type: 'mrkdwn', text: cut(`*${escapeMrkdwn(label)}*\n${escapeMrkdwn(value)}`, 2000) }));
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  const context = [`${escapeMrkdwn(message.occurredAt.toISOString())}`];
  if (message.link) context.push(mrkdwnLink(message.link, 'Open'));
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] });
  return {
    text: cut(`${escapeMrkdwn(message.title)}: ${body}`, 3000),
    blocks,
    ...(channel.trim() !== '' ? { channel: channel.trim() } : {}),
  };
}

export const hookSender =
  (limits: HttpLimits): ChannelSender =>
  async (target, message, options) => {
    const webhookUrl = String(target.secrets.webhookUrl ?? '');
    const channel = typeof target.config.channel === 'string' ? target.config.channel : '';
    const secrets = [webhookUrl];
    const answer = await postJson(webhookUrl, slackPayload(message, channel), {
      limits,
      service: 'the Slack webhook',
      field: 'webhookUrl',
      secrets,
      headers: { 'idempotency-key': options.idempotencyKey },
      signal: options.signal,
    });
    if (answer.status >= 200 && answer.status < 300) return;
    const error = refusal(answer, 'the Slack webhook', 'webhookUrl', secrets);
    // Slack names a missing or archived channel in its answer.
    if (/channel_not_found|channel_is_archived/.test(answer.body.toString('utf8'))) error.details.field = 'channel';
    throw error;
  };
