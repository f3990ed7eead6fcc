import { type NatsConnection, errors, headers } from '@nats-io/transport-node';
import { type CommandSigner, LOCAL_SERVER_ID, controlSubject } from '@skiff/domain';
import { ControlReply, ControlRequest } from '@skiff/proto';
import type { z } from 'zod';
import { DomainError } from '../../errors.js';

/** How long an agent has to answer a control request. */
export const CONTROL_TIMEOUT_MS = 5_000;

/** Sends one control request to a server's agent and answers its reply. */
export interface AgentControl {
  request(serverId: string, request: ControlRequest): Promise<ControlReply>;
}

export interface ControlClientOptions {
  /** The NATS connection the outbox relay uses (OutboxRelay.connection). */
  connection: () => Promise<NatsConnection>;
  /** Signs each request for its server's control subject (agents refuse unsigned ones). */
  signer: CommandSigner;
  timeoutMs?: number;
}

/**
 * Control requests (proto ControlRequest: cancel a running command, clean a workload's
 * queue) travel as NATS request/reply on `agent.<serverId>.ctl`, signed like commands,
 * never through the outbox: they act now or not at all. An agent that does not answer within the deadline (offline,
 * or NATS unreachable) is a BAD_REQUEST naming the server; nothing was done.
 */
export class ControlClient implements AgentControl {
  constructor(private readonly options: ControlClientOptions) {}

  async request(serverId: string, request: ControlRequest): Promise<ControlReply> {
    const timeout = this.options.timeoutMs ?? CONTROL_TIMEOUT_MS;
    let nc: NatsConnection;
    try {
      nc = await withDeadline(this.options.connection(), timeout);
    } catch {
      throw unreachable(serverId, 'NATS cannot be reached');
    }
    const subject = controlSubject(serverId);
    const data = ControlRequest.encode(request).finish();
    const signature = headers();
    for (const [name, value] of Object.entries(this.options.signer.sign(subject, data))) signature.set(name, value);
    try {
      const msg = await nc.request(subject, data, { timeout, headers: signature });
      return ControlReply.decode(msg.data);
    } catch (err) {
      // No responder (the agent is not connected), the deadline, or an undecodable answer.
      const noResponders = err instanceof errors.RequestError && err.isNoResponders();
      throw unreachable(serverId, noResponders ? 'it is not connected' : `no answer within ${Math.round(timeout / 1000)} s`);
    }
  }
}

/** Without NATS (no agent channel configured) no agent can be asked. */
export class NoAgentControl implements AgentControl {
  async request(serverId: string): Promise<ControlReply> {
    throw unreachable(serverId, 'the control plane runs without NATS');
  }
}

export function serverLabel(serverId: string): string {
  return serverId === LOCAL_SERVER_ID ? 'server local (the platform host)' : `server ${serverId}`;
}

/**
 * The result an agent's reply carries as JSON (`resultJson`), checked against `result`; an
 * answer that is not JSON, or not of that shape, is the error `trouble` makes of what it did.
 */
export function agentResult<T>(resultJson: string, result: z.ZodType<T>, trouble: (what: string) => DomainError): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(resultJson);
  } catch {
    throw trouble('answered something that is not JSON');
  }
  const checked = result.safeParse(parsed);
  if (!checked.success) throw trouble('answered something of the wrong shape');
  return checked.data;
}

/** The agent did not answer (offline, NATS away, or too slow): it did nothing the control plane knows of. */
export class AgentUnreachable extends DomainError {
  constructor(serverId: string, why: string) {
    super('BAD_REQUEST', `The agent of ${serverLabel(serverId)} did not answer (${why}); nothing was changed on it`);
  }
}

function unreachable(serverId: string, why: string): DomainError {
  return new AgentUnreachable(serverId, why);
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('deadline')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
