/**
 * messenger: the Telegram Bot API, `POST {apiBase}/bot<token>/sendMessage` with
 * `parse_mode: HTML`, in which `&`, `<` and `>` of every text are escaped. Telegram answers
 * `{ok, result}` or `{ok: false, error_code, description, parameters.retry_after}`.
 */
import type { ChannelSender, ChannelTarget, EventMessage } from './channel-sender.js';
import { DeliveryError } from './channel-sender.js';
import { cut, type HttpLimits, parseJson, postJson, scrub } from './http-post.js';
import { trimChar } from '@skiff/domain';

export const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Telegram's token form, `<bot id>:<secret>`; checked before it goes into a URL path. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{1,100}$/;
/** A numeric chat id (groups are negative) or a public `@channelusername`. */
const CHAT_ID = /^(?:-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;
const THREAD_ID = /^\d{1,20}$/;

/** The first setting Telegram could never take, with why; null when all have its form. */
export function messengerSettingsProblem(settings: { botToken?: unknown; chatId?: unknown; messageThreadId?: unknown }): { field: string; message: string } | null {
  if (typeof settings.botToken !== 'string' || !BOT_TOKEN.test(settings.botToken)) {
    return { field: 'botToken', message: 'is not a Telegram bot token (<bot id>:<secret>, as BotFather gives it)' };
  }
  if (typeof settings.chatId !== 'string' || !CHAT_ID.test(settings.chatId)) {
    return { field: 'chatId', message: 'must be a numeric chat id (e.g. -1001234567890) or @channelusername' };
  }
  const thread = settings.messageThreadId;
  if (thread !== undefined && thread !== '' && (typeof thread !== 'string' || !THREAD_ID.test(thread))) {
    return { field: 'messageThreadId', message: 'must be empty or the numeric id of a topic' };
  }
  return null;
}

export function telegramText(message: EventMessage): string {
  const lines = [`<b>${escapeHtml(message.title)}</b>`, escapeHtml(message.text)];
  if (message.fields.length > 0) lines.push('', ...message.fields.map(([label, value]) => `<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`));
  if (message.link) lines.push('', `<a href="${escapeHtml(message.link).replace(/"/g, '&quot;')}">Open</a>`);
  // 4096 characters after entity parsing; cutting the source could break a tag, so the text part is cut first.
  const text = lines.join('\n');
  return text.length <= 4096 ? text : [`<b>${escapeHtml(cut(message.title, 200))}</b>`, escapeHtml(cut(message.text, 3800))].join('\n');
}

export function telegramPayload(target: ChannelTarget, message: EventMessage) {
  const thread = target.config.messageThreadId;
  return {
    chat_id: String(target.config.chatId),
    ...(typeof thread === 'string' && thread !== '' ? { message_thread_id: Number(thread) } : {}),
    text: telegramText(message),
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
  };
}

interface TelegramAnswer {
  ok?: boolean;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/** Which setting a Telegram refusal is about, from its code and description. */
function fieldOf(code: number, description: string): string | undefined {
  if (code === 401 || code === 404) return 'botToken';
  if (/thread|topic/i.test(description)) return 'messageThreadId';
  if (code === 403 || /chat/i.test(description)) return 'chatId';
  return undefined;
}

export const messengerSender =
  (limits: HttpLimits, apiBase: string): ChannelSender =>
  async (target, message, options) => {
    const botToken = String(target.secrets.botToken ?? '');
    const problem = messengerSettingsProblem({ botToken, ...target.config });
    if (problem) throw new DeliveryError(`Telegram: ${problem.field} ${problem.message}`, false, { field: problem.field });
    const secrets = [botToken];
    const answer = await postJson(`${trimChar(apiBase, '/', 'end')}/bot${botToken}/sendMessage`, telegramPayload(target, message), {
      limits,
      service: 'Telegram',
      field: 'botToken',
      secrets,
      signal: options.signal,
    });
    const body = (parseJson(answer) ?? {}) as TelegramAnswer;
    if (answer.status === 200 && body.ok === true) return;
    const code = typeof body.error_code === 'number' ? body.error_code : answer.status;
    const description = scrub(typeof body.description === 'string' ? body.description : `HTTP ${answer.status}`, secrets);
    const said = `Telegram refused the message: ${description}`;
    if (code === 429) {
      const after = body.parameters?.retry_after;
      throw new DeliveryError(said, true, typeof after === 'number' ? { retryAfterMs: after * 1000 } : {});
    }
    if (code >= 500 || answer.status >= 500) throw new DeliveryError(said, true);
    throw new DeliveryError(said, false, { field: fieldOf(code, description) });
  };
