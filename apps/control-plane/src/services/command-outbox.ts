import type { Db } from '@skiff/db';
import { Command, commandKindToJSON, timestampToDate } from '@skiff/proto';
import type { SecretBox } from '../crypto/secret-box.js';

/**
 * The outbox rows of commands (ARCHITECTURE.md "Commands"). A command is written in the
 * transaction of the change it carries out; the relay publishes it. The payload is the
 * binary Command, base64, sealed: deploy commands carry environment values.
 */
export class CommandOutbox {
  constructor(private readonly secrets: SecretBox) {}

  /** Writes a pending command; call inside the transaction of the change it belongs to. */
  async queue(tx: Db, command: Command, links: { deploymentId?: string } = {}): Promise<void> {
    if (!command.deadline) throw new Error('a command needs a deadline');
    await tx
      .insertInto('commands')
      .values({
        id: command.commandId,
        serverId: command.serverId,
        kind: commandKindToJSON(command.kind),
        workloadKey: command.workloadKey,
        deploymentId: links.deploymentId ?? null,
        payload: this.seal(command),
        deadline: timestampToDate(command.deadline),
        createdAt: command.createdAt ? timestampToDate(command.createdAt) : undefined,
      })
      .execute();
  }

  seal(command: Command): string {
    return this.secrets.seal(Buffer.from(Command.encode(command).finish()).toString('base64'));
  }

  /** The bytes to publish: the encoded Command of a row's payload. */
  open(payload: string): Uint8Array {
    return new Uint8Array(Buffer.from(this.secrets.open(payload), 'base64'));
  }
}
