/**
 * Tests only: the command stream on a test NATS server, created idempotently (several test
 * files share the server and the stream name) as the control plane's relay creates it, and commands published the way the control
 * plane's relay does (`Nats-Msg-Id` = command id, unless a test re-publishes on purpose).
 */
import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { COMMAND_STREAM, COMMAND_STREAM_LIMITS, COMMAND_SUBJECTS, commandConsumer, commandSubject } from '@skiff/domain';
import { Command } from '@skiff/proto';

export async function ensureCommandStream(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(COMMAND_STREAM);
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamNotFound) throw err;
  }
  try {
    await jsm.streams.add({
      name: COMMAND_STREAM,
      subjects: [COMMAND_SUBJECTS],
      storage: StorageType.File,
      retention: RetentionPolicy.Workqueue,
      duplicate_window: nanos(COMMAND_STREAM_LIMITS.duplicateWindowMs),
      max_age: nanos(COMMAND_STREAM_LIMITS.maxAgeMs),
      max_msg_size: COMMAND_STREAM_LIMITS.maxMessageBytes,
    });
  } catch (err) {
    // Another test file created it in between.
    await jsm.streams.info(COMMAND_STREAM).catch(() => {
      throw err;
    });
  }
}

export async function publishCommand(nc: NatsConnection, command: Command, msgId: string | null = command.commandId): Promise<void> {
  const js = jetstream(nc);
  await js.publish(commandSubject(command.serverId), Command.encode(command).finish(), msgId === null ? {} : { msgID: msgId });
}

export async function publishRaw(nc: NatsConnection, serverId: string, data: Uint8Array, msgId?: string): Promise<void> {
  await jetstream(nc).publish(commandSubject(serverId), data, msgId ? { msgID: msgId } : {});
}

/** Removes a test server's consumer and its messages from the shared stream. */
export async function removeServerChannel(nc: NatsConnection, serverId: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.delete(COMMAND_STREAM, commandConsumer(serverId)).catch((err: unknown) => {
    if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.ConsumerNotFound) throw err;
  });
  await jsm.streams.purge(COMMAND_STREAM, { filter: commandSubject(serverId) });
}
