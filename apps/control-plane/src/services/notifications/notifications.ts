import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Notification, NotificationKind } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { iso, type ServiceDeps } from '../shared/deps.js';
import { flagOf } from '../shared/record-codec.js';
import { refuseMetadataTarget } from '../shared/target-url.js';
import { outboundHostProblem } from '@skiff/domain';
import { messengerSettingsProblem } from './channels/messenger.js';
import { allOfOrganization, findOfOrganization } from '../shared/organization-records.js';
import { FLAGS } from './flags.js';

export { FLAGS };

interface ChannelSpec {
  /** The API name of the channel id (`hookId`, …) and the prefix of generated ids. */
  idField: string;
  idPrefix: string;
  /** Settings kept in `config` (returned). */
  config: readonly string[];
  /** Settings kept sealed in `secrets` (write-only: responses show `has<Field>`). */
  secrets: readonly string[];
  /** Fields holding URLs that messages are sent to. */
  urls: readonly string[];
}

/**
 * The five channel kinds. Each notification is one row: its flags, its kind, the channel id
 * the spec names (`hookId`, …), the settings that are not secret, and the sealed secrets.
 */
export const CHANNELS: Record<NotificationKind, ChannelSpec> = {
  hook: { idField: 'hookId', idPrefix: 'hok', config: ['channel'], secrets: ['webhookUrl'], urls: ['webhookUrl'] },
  messenger: { idField: 'messengerId', idPrefix: 'msg', config: ['chatId', 'messageThreadId'], secrets: ['botToken'], urls: [] },
  community: { idField: 'communityId', idPrefix: 'cmt', config: ['decoration'], secrets: ['webhookUrl'], urls: ['webhookUrl'] },
  email: {
    idField: 'emailId',
    idPrefix: 'eml',
    config: ['smtpServer', 'smtpPort', 'username', 'fromAddress', 'toAddresses'],
    secrets: ['password'],
    urls: [],
  },
  push: { idField: 'pushId', idPrefix: 'psh', config: ['serverUrl', 'priority', 'decoration'], secrets: ['appToken'], urls: ['serverUrl'] },
};

type Values = Record<string, unknown>;
type NotificationRecord = OutputOf<Contracts['notification']['one']>;
/** The record of one channel kind. */
type RecordOf<K extends NotificationKind> = Extract<NotificationRecord, { kind: K }>;

/** Notification channels: records, flags and sealed secrets. Sending comes with delivery. */
export class NotificationService {
  constructor(private readonly deps: ServiceDeps) {}

  private get db() {
    return this.deps.db;
  }

  record(row: Notification): NotificationRecord {
    const spec = CHANNELS[row.kind];
    const secrets = JSON.parse(this.deps.secrets.open(row.secrets)) as Values;
    const out: Values = {
      notificationId: row.id,
      organizationId: row.organizationId,
      name: row.name,
      kind: row.kind,
    };
    for (const flag of FLAGS) out[flag] = row.flags[flag] === true;
    out[spec.idField] = row.channelId;
    for (const field of spec.config) out[field] = row.config[field];
    for (const field of spec.secrets) out[flagOf(field)] = typeof secrets[field] === 'string' && secrets[field] !== '';
    out.createdAt = iso(row.createdAt);
    return out as NotificationRecord;
  }

  private checkUrls(kind: NotificationKind, input: Values) {
    checkChannelSettings(kind, input);
  }

  async create<K extends NotificationKind>(p: Principal, kind: K, input: Values): Promise<RecordOf<K>> {
    const spec = CHANNELS[kind];
    this.checkUrls(kind, input);
    const pick = (fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, input[f]]));
    const row = await this.db
      .insertInto('notifications')
      .values({
        id: this.deps.ids('ntf'),
        organizationId: p.organizationId,
        name: input.name as string,
        kind,
        channelId: this.deps.ids(spec.idPrefix),
        flags: JSON.stringify(pick(FLAGS)),
        config: JSON.stringify(pick(spec.config)),
        secrets: this.deps.secrets.seal(JSON.stringify(pick(spec.secrets))),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(row) as RecordOf<K>;
  }

  /** A notification of the caller's organization; another organization's is NOT_FOUND. */
  private async find(p: Principal, notificationId: string): Promise<Notification> {
    return findOfOrganization(this.db, 'notifications', p, notificationId, 'notification');
  }

  /** `update<Kind>`: the notification and its channel id must belong together. */
  async update<K extends NotificationKind>(
    p: Principal,
    kind: K,
    input: Values & { notificationId: string; organizationId?: string },
  ): Promise<RecordOf<K>> {
    const spec = CHANNELS[kind];
    if (input.organizationId !== undefined && input.organizationId !== p.organizationId) {
      throw Invalid('organizationId', "must be the API key's organization");
    }
    const row = await this.find(p, input.notificationId);
    if (row.kind !== kind || row.channelId !== input[spec.idField]) {
      throw Invalid(spec.idField, `is not the ${kind} channel of this notification`);
    }
    const given = (fields: readonly string[]) => Object.fromEntries(fields.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
    const secrets = { ...(JSON.parse(this.deps.secrets.open(row.secrets)) as Values), ...given(spec.secrets) };
    // The settings as they will be, so that a change of one is judged with the others.
    this.checkUrls(kind, { ...row.config, ...secrets, ...given(spec.config) });
    const updated = await this.db
      .updateTable('notifications')
      .set({
        name: (input.name as string | undefined) ?? row.name,
        flags: JSON.stringify({ ...row.flags, ...given(FLAGS) }),
        config: JSON.stringify({ ...row.config, ...given(spec.config) }),
        secrets: this.deps.secrets.seal(JSON.stringify(secrets)),
      })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(updated) as RecordOf<K>;
  }

  async one(p: Principal, notificationId: string) {
    return this.record(await this.find(p, notificationId));
  }

  async all(p: Principal) {
    return (await allOfOrganization(this.db, 'notifications', p)).map((r) => this.record(r));
  }

  async remove(p: Principal, notificationId: string) {
    const row = await this.find(p, notificationId);
    await this.db.deleteFrom('notifications').where('id', '=', row.id).execute();
    return this.record(row);
  }
}

/**
 * Refuses, naming the field, settings a channel could never send with: a URL or SMTP host at a
 * link-local or metadata address (checked again after resolving, when sending), a Telegram
 * token, chat or topic id not of Telegram's form (the token goes into the API's URL path).
 */
export function checkChannelSettings(kind: NotificationKind, settings: Values): void {
  for (const field of CHANNELS[kind].urls) {
    if (typeof settings[field] === 'string') refuseMetadataTarget(field, settings[field]);
  }
  if (kind === 'email' && typeof settings.smtpServer === 'string') {
    const problem = outboundHostProblem(settings.smtpServer.trim());
    if (problem) throw Invalid('smtpServer', problem);
  }
  if (kind === 'messenger') {
    const problem = messengerSettingsProblem(settings);
    if (problem) throw Invalid(problem.field, problem.message);
  }
}
