/** The five notification channel kinds, their settings and operations (libs/contracts/src/notification). */
export type ChannelKind = 'hook' | 'messenger' | 'community' | 'email' | 'push';

export interface ChannelField {
  name: string;
  label: string;
  type: 'text' | 'secret' | 'number' | 'bool' | 'list';
  /** Sent to the kind's test operation. */
  tested?: boolean;
}

export interface ChannelSpec {
  title: string;
  /** The channel's id field, as updates name it. */
  idField: string;
  fields: ChannelField[];
  /** push has no test operation. */
  test?: string;
}

const cap = (k: string) => k[0]!.toUpperCase() + k.slice(1);

export const CHANNELS: Record<ChannelKind, ChannelSpec> = {
  hook: {
    title: 'Chat webhook (Slack-style)', idField: 'hookId', test: 'testHookConnection',
    fields: [{ name: 'webhookUrl', label: 'Webhook URL', type: 'secret', tested: true }, { name: 'channel', label: 'Channel', type: 'text', tested: true }],
  },
  messenger: {
    title: 'Messenger bot (Telegram-style)', idField: 'messengerId', test: 'testMessengerConnection',
    fields: [
      { name: 'botToken', label: 'Bot token', type: 'secret', tested: true },
      { name: 'chatId', label: 'Chat id', type: 'text', tested: true },
      { name: 'messageThreadId', label: 'Message thread id', type: 'text', tested: true },
    ],
  },
  community: {
    title: 'Community webhook (Discord-style)', idField: 'communityId', test: 'testCommunityConnection',
    fields: [{ name: 'webhookUrl', label: 'Webhook URL', type: 'secret', tested: true }, { name: 'decoration', label: 'Decorated messages', type: 'bool', tested: true }],
  },
  email: {
    title: 'Email (SMTP)', idField: 'emailId', test: 'testEmailConnection',
    fields: [
      { name: 'smtpServer', label: 'SMTP server', type: 'text', tested: true },
      { name: 'smtpPort', label: 'SMTP port', type: 'number', tested: true },
      { name: 'username', label: 'SMTP user', type: 'text', tested: true },
      { name: 'password', label: 'SMTP password', type: 'secret', tested: true },
      { name: 'fromAddress', label: 'From address', type: 'text', tested: true },
      { name: 'toAddresses', label: 'To addresses (comma-separated)', type: 'list', tested: true },
    ],
  },
  push: {
    title: 'Push server (Gotify-style)', idField: 'pushId',
    fields: [
      { name: 'serverUrl', label: 'Server URL', type: 'text' },
      { name: 'appToken', label: 'Application token', type: 'secret' },
      { name: 'priority', label: 'Priority (1 to 10)', type: 'number' },
      { name: 'decoration', label: 'Decorated messages', type: 'bool' },
    ],
  },
};

/** The events a channel subscribes to (the `Flags` of every create and update). */
export const FLAGS: { name: string; label: string }[] = [
  { name: 'appDeploy', label: 'Application deployed' },
  { name: 'appBuildError', label: 'Build failed' },
  { name: 'databaseBackup', label: 'Database backup' },
  { name: 'volumeBackup', label: 'Volume backup' },
  { name: 'platformBackup', label: 'Platform backup' },
  { name: 'platformRestart', label: 'Platform restart' },
  { name: 'containerCleanup', label: 'Container cleanup' },
  { name: 'serverThreshold', label: 'Server threshold' },
];

export const createOp = (k: ChannelKind) => `/api/notification.create${cap(k)}`;
export const updateOp = (k: ChannelKind) => `/api/notification.update${cap(k)}`;

export type Values = Record<string, string | boolean>;

/** The form's values as the API takes them; an empty secret on an update is left out (kept as stored). */
export function toBody(kind: ChannelKind, values: Values, opts: { update: boolean; only?: (f: ChannelField) => boolean }): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of CHANNELS[kind].fields) {
    if (opts.only && !opts.only(f)) continue;
    const v = values[f.name];
    if (f.type === 'bool') body[f.name] = v === true;
    else if (f.type === 'number') body[f.name] = v === '' || v === undefined ? undefined : Number(v);
    else if (f.type === 'list') body[f.name] = String(v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    else if (f.type === 'secret' && opts.update && !v) continue;
    else body[f.name] = String(v ?? '');
  }
  return body;
}

/** A stored channel's values for the edit form: secrets empty (write-only), flags and settings as stored. */
export function valuesOf(record: Record<string, unknown>): Values {
  const values: Values = { name: String(record.name ?? '') };
  for (const f of FLAGS) values[f.name] = record[f.name] === true;
  for (const f of CHANNELS[record.kind as ChannelKind].fields) {
    const v = record[f.name];
    values[f.name] = f.type === 'secret' ? '' : f.type === 'bool' ? v === true : Array.isArray(v) ? v.join(', ') : v === undefined || v === null ? '' : String(v);
  }
  return values;
}

export function blank(kind: ChannelKind): Values {
  const values: Values = { name: '' };
  for (const f of FLAGS) values[f.name] = f.name === 'appDeploy' || f.name === 'appBuildError';
  for (const f of CHANNELS[kind].fields) values[f.name] = f.type === 'bool' ? false : f.name === 'smtpPort' ? '587' : f.name === 'priority' ? '5' : '';
  return values;
}

/** Says whether a stored secret is set: `has<Field>` of the record (hasWebhookUrl, hasBotToken…). */
export const hasSecret = (record: Record<string, unknown>, field: string) => record[`has${cap(field)}`] === true;
