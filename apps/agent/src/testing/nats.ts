/**
 * Tests only: the command stream on a test NATS server, created idempotently (several test
 * files share the server and the stream name) as the control plane's relay creates it, and commands published the way the control
 * plane's relay does (`Nats-Msg-Id` = command id, unless a test re-publishes on purpose),
 * signed by the test control plane's key (TEST_COMMAND_SIGNER, which startTestAgent's agents
 * trust unless told otherwise); control requests signed the same way (requestControl).
 */
import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type MsgHdrs, headers, nanos, type NatsConnection } from '@nats-io/transport-node';
import { COMMAND_STREAM, COMMAND_STREAM_LIMITS, COMMAND_SUBJECTS, CommandSigner, commandConsumer, commandSubject, controlSubject } from '@skiff/domain';
import { Command, ControlReply, ControlRequest } from '@skiff/proto';

/** The test control plane's command key: what publishCommand and requestControl sign with by default. */
export const TEST_COMMAND_SIGNER = CommandSigner.generate();

/** How a test message is signed: by a signer (for its subject, or `subject` when a test signs for another one), or not at all. */
export type Signing = CommandSigner | { signer: CommandSigner; subject: string } | 'unsigned';

function signed(subject: string, data: Uint8Array, signing: Signing, extra?: MsgHdrs): MsgHdrs | undefined {
  if (signing === 'unsigned') return extra;
  const { signer, subject: signedFor } = signing instanceof CommandSigner ? { signer: signing, subject } : signing;
  const h = extra ?? headers();
  for (const [name, value] of Object.entries(signer.sign(signedFor, data))) h.set(name, value);
  return h;
}

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

export async function publishCommand(
  nc: NatsConnection,
  command: Command,
  msgId: string | null = command.commandId,
  signing: Signing = TEST_COMMAND_SIGNER,
): Promise<void> {
  await publishRaw(nc, command.serverId, Command.encode(command).finish(), msgId ?? undefined, signing);
}

export async function publishRaw(nc: NatsConnection, serverId: string, data: Uint8Array, msgId?: string, signing: Signing = TEST_COMMAND_SIGNER): Promise<void> {
  const subject = commandSubject(serverId);
  const h = signed(subject, data, signing);
  await jetstream(nc).publish(subject, data, { ...(msgId ? { msgID: msgId } : {}), ...(h ? { headers: h } : {}) });
}

/** Sends a control request to a server's agent as the control plane does, and answers the reply. */
export async function requestControl(
  nc: NatsConnection,
  serverId: string,
  request: ControlRequest,
  options: { timeoutMs?: number; signing?: Signing } = {},
): Promise<ControlReply> {
  const subject = controlSubject(serverId);
  const data = ControlRequest.encode(request).finish();
  const h = signed(subject, data, options.signing ?? TEST_COMMAND_SIGNER);
  const msg = await nc.request(subject, data, { timeout: options.timeoutMs ?? 5_000, ...(h ? { headers: h } : {}) });
  return ControlReply.decode(msg.data);
}

/** Removes a test server's consumer and its messages from the shared stream. */
export async function removeServerChannel(nc: NatsConnection, serverId: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.delete(COMMAND_STREAM, commandConsumer(serverId)).catch((err: unknown) => {
    if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.ConsumerNotFound) throw err;
  });
  await jsm.streams.purge(COMMAND_STREAM, { filter: commandSubject(serverId) });
}
