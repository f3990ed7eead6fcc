/**
 * Answers this server's control requests: NATS request/reply on `controlSubject(serverId)`
 * (`agent.<id>.ctl`), one binary ControlRequest in, one ControlReply out, right away (the
 * proto's "Control requests"). Nothing is queued: a request that arrives while the agent is
 * disconnected is lost, and the caller's deadline tells it the agent did not answer. The
 * subscription is restored by the client when it reconnects.
 *
 * A request must be signed by the control plane's pinned command key for this server's
 * control subject, within CONTROL_REQUEST_MAX_AGE_MS (libs/domain command-signature.ts);
 * one that is not is neither decoded nor carried out, is logged without its payload, and
 * answered with an error.
 */
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { CONTROL_REQUEST_MAX_AGE_MS, type CommandVerifier, controlSubject } from '@skiff/domain';
import { ControlReply, ControlRequest } from '@skiff/proto';
import type { Logger } from 'pino';

export interface ControlHandler {
  handle(request: ControlRequest): Promise<ControlReply> | ControlReply;
}

export interface ControlResponderOptions {
  nc: NatsConnection;
  serverId: string;
  control: ControlHandler;
  /** The control plane's pinned command key. */
  verifier: CommandVerifier;
  log: Logger;
  /** The clock signing times are checked against (the real one by default). */
  now?: () => Date;
}

export class ControlResponder {
  private subscription: Subscription | null = null;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: ControlResponderOptions) {}

  /** Subscribes; resolves once the NATS server knows the subscription. */
  async start(): Promise<void> {
    if (this.subscription) return;
    const subject = controlSubject(this.options.serverId);
    this.subscription = this.options.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) {
          this.options.log.warn({ err: err.message }, 'control subscription error');
          return;
        }
        const answer = this.answer(msg).finally(() => this.pending.delete(answer));
        this.pending.add(answer);
      },
    });
    await this.options.nc.flush();
    this.options.log.info({ subject }, 'answering control requests');
  }

  /** Stops taking requests; resolves when those being answered are answered. */
  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription && !subscription.isClosed()) subscription.unsubscribe();
    await Promise.allSettled([...this.pending]);
  }

  private async answer(msg: Msg): Promise<void> {
    let reply: ControlReply;
    const now = this.options.now?.() ?? new Date();
    const refused = this.options.verifier.check(controlSubject(this.options.serverId), msg.data, (name) => msg.headers?.get(name), { maxAgeMs: CONTROL_REQUEST_MAX_AGE_MS, now });
    if (refused !== null) {
      this.options.log.warn({ problem: refused, keyId: this.options.verifier.keyId }, 'control request refused: not signed by the control plane for this server');
      this.respond(msg, { commandIds: [], error: `the agent refused the request: ${refused}` });
      return;
    }
    try {
      const request = ControlRequest.decode(msg.data);
      reply = await this.options.control.handle(request);
    } catch (err) {
      this.options.log.error({ err }, 'control request failed');
      reply = { commandIds: [], error: `the agent could not carry out the request: ${(err as Error).message}` };
    }
    this.respond(msg, reply);
  }

  private respond(msg: Msg, reply: ControlReply): void {
    if (!msg.reply) return;
    try {
      msg.respond(ControlReply.encode(reply).finish());
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, 'could not answer a control request');
    }
  }
}
