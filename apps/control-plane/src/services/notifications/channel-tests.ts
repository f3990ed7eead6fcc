import { randomUUID } from 'node:crypto';
import type { NotificationKind } from '@skiff/db';
import { DomainError, Invalid } from '../../errors.js';
import { type ChannelSender, DeliveryError, type EventMessage } from './channels/index.js';
import { CHANNELS, checkChannelSettings } from './notifications.js';

/** The setting a failed test names when the service did not say which. */
const MAIN_FIELD: Record<NotificationKind, string> = {
  hook: 'webhookUrl',
  messenger: 'botToken',
  community: 'webhookUrl',
  email: 'smtpServer',
  push: 'serverUrl',
};

export const testMessage = (now: Date): EventMessage => ({
  kind: 'appDeploy',
  title: 'Skiff test message',
  text: 'This channel is set up: Skiff events will arrive here.',
  outcome: 'info',
  fields: [['Sent by', 'Skiff']],
  occurredAt: now,
});

/** `notification.test*Connection`: one test message with the settings given, nothing stored. */
export class ChannelTests {
  constructor(
    private readonly senders: Record<NotificationKind, ChannelSender>,
    private readonly clock: () => Date,
  ) {}

  async test(kind: NotificationKind, input: Record<string, unknown>): Promise<Record<string, never>> {
    checkChannelSettings(kind, input);
    const spec = CHANNELS[kind];
    const pick = (fields: readonly string[]) => Object.fromEntries(fields.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
    const target = { notificationId: 'test', kind, config: pick(spec.config), secrets: pick(spec.secrets) };
    try {
      await this.senders[kind](target, testMessage(this.clock()), { idempotencyKey: `test-${randomUUID()}` });
    } catch (error) {
      if (error instanceof DomainError) throw error;
      // A DeliveryError's message holds no secret; anything else is described by its kind only.
      const message = error instanceof DeliveryError ? error.message : 'the test message could not be sent';
      throw Invalid(error instanceof DeliveryError ? (error.details.field ?? MAIN_FIELD[kind]) : MAIN_FIELD[kind], message);
    }
    return {};
  }
}
