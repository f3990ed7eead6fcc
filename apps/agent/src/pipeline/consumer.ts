/**
 * Receives this server's commands from NATS JetStream: the durable pull consumer
 * `commandConsumer(serverId)` on the stream COMMAND_STREAM, filtered to
 * `commandSubject(serverId)`, with explicit acks.
 *
 * The control plane creates the stream; until it exists (or while NATS is unreachable) the
 * consumer retries with backoff. It creates its durable consumer when missing (and again
 * when it disappears), then takes messages one at a time in stream order: a message is
 * acked only after `onMessage` resolved (the command is journaled), and nak'ed for a later
 * redelivery when it rejected. After a NATS outage the client reconnects and pulling
 * resumes; whatever was delivered but not acked comes again, and the journal makes that
 * harmless.
 *
 * Every message must be signed by the control plane's pinned command key for this server's
 * subject (libs/domain command-signature.ts). One that is not never reaches `onMessage`: it
 * is not journaled, run or reported (its command id cannot be trusted, so reporting it would
 * let a forger end a real command), it is logged without its payload and terminated, so
 * JetStream does not deliver it again.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { COMMAND_STREAM, type CommandVerifier, WakeableSleep, commandConsumer, commandSubject } from '@skiff/domain';
import type { Logger } from 'pino';

export interface CommandConsumerOptions {
  nc: NatsConnection;
  serverId: string;
  log: Logger;
  /** The control plane's pinned command key: messages it did not sign for this server are refused. */
  verifier: CommandVerifier;
  /** Takes one message in; when it resolves the message is acked, when it rejects nak'ed. */
  onMessage: (data: Uint8Array, msgId: string | undefined) => Promise<unknown>;
  /** Backoff while the stream or NATS is missing. Defaults 250 ms to 5 s. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** How long JetStream waits for an ack before delivering again. Default 30 s. */
  ackWaitMs?: number;
  /** Delay before a nak'ed message comes again. Default 5 s. */
  nakDelayMs?: number;
}

/** Notifications after which the consumer must be looked up (and maybe created) again. */
const LOST = new Set(['consumer_deleted', 'consumer_not_found', 'stream_not_found']);

export class CommandConsumer {
  private readonly stream = COMMAND_STREAM;
  private readonly name: string;
  private readonly subject: string;
  private stopped = false;
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private readonly backoff = new WakeableSleep();
  private readyWaiters: Array<() => void> = [];
  private bound = false;

  constructor(private readonly options: CommandConsumerOptions) {
    this.name = commandConsumer(options.serverId);
    this.subject = commandSubject(options.serverId);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the consumer exists and pulls messages (the first time). */
  ready(): Promise<void> {
    if (this.bound) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Stops pulling; resolves when the message being taken in (if any) is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    this.backoff.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { log } = this.options;
    let delay = this.options.retryInitialMs ?? 250;
    let waitingLogged = false;
    while (!this.stopped) {
      try {
        const jsm = await jetstreamManager(this.options.nc);
        await this.ensureConsumer(jsm);
        const consumer = await jetstream(this.options.nc).consumers.get(this.stream, this.name);
        const messages = await consumer.consume({ max_messages: 32 });
        this.messages = messages;
        if (this.stopped) messages.stop();
        log.info({ stream: this.stream, consumer: this.name, subject: this.subject }, 'consuming commands');
        this.markReady();
        waitingLogged = false;
        delay = this.options.retryInitialMs ?? 250;
        void this.watch(messages);
        for await (const msg of messages) {
          await this.take(msg);
          if (this.stopped) break;
        }
      } catch (err) {
        if (this.stopped) break;
        const level = waitingLogged ? 'debug' : 'warn';
        log[level]({ err: describeError(err) }, 'command stream not available yet, retrying');
        waitingLogged = true;
      } finally {
        this.messages = null;
      }
      if (!this.stopped) {
        await this.backoff.sleep(delay);
        delay = Math.min(delay * 2, this.options.retryMaxMs ?? 5_000);
      }
    }
  }

  /** Ends the current consume() when its consumer or stream went away, so run() recreates it. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const status of messages.status()) {
        if (LOST.has(status.type)) {
          this.options.log.warn({ status: status.type }, 'command consumer lost, setting it up again');
          messages.stop();
          return;
        }
      }
    } catch (err) {
      this.options.log.debug({ err: describeError(err) }, 'consumer status stream ended');
    }
  }

  private async take(msg: JsMsg): Promise<void> {
    const refused = this.options.verifier.check(this.subject, msg.data, (name) => msg.headers?.get(name));
    if (refused !== null) {
      this.options.log.warn({ seq: msg.seq, problem: refused, keyId: this.options.verifier.keyId }, 'command message refused: not signed by the control plane for this server');
      try {
        // Without a reason: nats-server 2.9 ignores a `+TERM <reason>`, and the message would stay pending.
        msg.term();
      } catch (err) {
        this.options.log.warn({ err: describeError(err), seq: msg.seq }, 'could not answer a command message');
      }
      return;
    }
    let taken = false;
    try {
      await this.options.onMessage(msg.data, msg.headers?.get('Nats-Msg-Id') || undefined);
      taken = true;
    } catch (err) {
      this.options.log.error({ err: describeError(err), seq: msg.seq }, 'command not taken in; it will be delivered again');
    }
    try {
      if (taken) msg.ack();
      else msg.nak(this.options.nakDelayMs ?? 5_000);
    } catch (err) {
      // The connection is gone: JetStream delivers the message again, and the journal knows it.
      this.options.log.warn({ err: describeError(err), seq: msg.seq }, 'could not answer a command message');
    }
  }

  private async ensureConsumer(jsm: JetStreamManager): Promise<void> {
    const config = {
      durable_name: this.name,
      filter_subject: this.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(this.options.ackWaitMs ?? 30_000),
      max_deliver: -1,
    };
    try {
      const info = await jsm.consumers.info(this.stream, this.name);
      if (info.config.ack_policy !== AckPolicy.Explicit) {
        // Not updatable: replace it. Unacked commands come again; the journal de-duplicates.
        await jsm.consumers.delete(this.stream, this.name);
        await jsm.consumers.add(this.stream, config);
      } else if (info.config.filter_subject !== this.subject) {
        await jsm.consumers.update(this.stream, this.name, { filter_subject: this.subject });
      }
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.ConsumerNotFound) throw err;
      await jsm.consumers.add(this.stream, config);
      this.options.log.info({ consumer: this.name }, 'created the durable command consumer');
    }
  }

  private markReady(): void {
    this.bound = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
