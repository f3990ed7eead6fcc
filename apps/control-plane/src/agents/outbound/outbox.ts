import type { Db } from '@skiff/db';
import { Command, commandKindToJSON, timestampToDate } from '@skiff/proto';
import type { SecretBox } from '../../crypto/secret-box.js';
import { checkCommandSize } from './command-size.js';

/**
 * The outbox rows of commands (ARCHITECTURE.md "Commands"): the only writer of new `commands`
 * rows. A command (built by its kind, kinds/) is written in the transaction of the change it
 * carries out; the relay publishes it. The payload is the binary Command, base64, sealed:
 * deploy commands carry environment values.
 *
 * After the transaction commits, the writer calls `notify()`: the relay (which subscribed
 * when it was created) publishes at once instead of at its next poll. Without a relay (no
 * NATS) nobody listens and the commands wait in the outbox.
 */
export class CommandOutbox {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly secrets: SecretBox) {}

  /** Calls `listener` on every notify(); answers the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Commands were committed: wake whoever publishes them. */
  notify(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * Writes a pending command; call inside the transaction of the change it belongs to. A
   * command too big for NATS to carry is refused (BAD_REQUEST naming the input field that
   * made it big: command-size.ts) before anything is written, so the transaction rolls back.
   */
  async queue(tx: Db, command: Command, links: { deploymentId?: string } = {}): Promise<void> {
    if (!command.deadline) throw new Error('a command needs a deadline');
    const encoded = Command.encode(command).finish();
    checkCommandSize(command, encoded.length);
    await tx
      .insertInto('commands')
      .values({
        id: command.commandId,
        serverId: command.serverId,
        kind: commandKindToJSON(command.kind),
        workloadKey: command.workloadKey,
        deploymentId: links.deploymentId ?? null,
        payload: this.secrets.seal(Buffer.from(encoded).toString('base64')),
        deadline: timestampToDate(command.deadline),
        createdAt: command.createdAt ? timestampToDate(command.createdAt) : undefined,
      })
      .execute();
  }

  /** The bytes to publish: the encoded Command of a row's payload. */
  open(payload: string): Uint8Array {
    return new Uint8Array(Buffer.from(this.secrets.open(payload), 'base64'));
  }

  /** The Command of a row's payload. */
  read(payload: string): Command {
    return Command.decode(this.open(payload));
  }
}
