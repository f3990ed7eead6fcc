import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { logStreamSubject } from '@skiff/domain';
import { LogChunk } from '@skiff/proto';
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../errors.js';
import { type AgentControl, AgentUnreachable, serverLabel } from './control-client.js';

/** The bounds of one runtime log stream (SKIFF_LOG_MAX_BYTES, SKIFF_LOG_MAX_LINES_PER_SECOND, SKIFF_LOG_MAX_SECONDS). */
export interface LogLimits {
  maxBytes: number;
  maxLinesPerSecond: number;
  maxDurationMs: number;
}

export const DEFAULT_LOG_LIMITS: LogLimits = { maxBytes: 10 * 1024 * 1024, maxLinesPerSecond: 1000, maxDurationMs: 3600_000 };

export interface LogTarget {
  serviceName?: string;
  containerId?: string;
  /** The workload the target must belong to (its `skiff.kind` / `skiff.id` labels). */
  owner: { kind: string; id: string };
}

export interface LogStreamOptions {
  tail: number;
  sinceUnix: number;
  follow: boolean;
}

/** No chunk (not even the agent's heartbeat) for this long: the agent is gone. */
const SILENCE_MS = 15_000;

/**
 * Runtime log streams from a server's agent (proto LogsRequest): the control plane subscribes
 * to `agent.<server>.logs.<stream id>` (a fresh random id), asks the agent over the signed
 * control channel to stream there, and answers each LogChunk once the caller has taken it
 * (backpressure). When the caller stops (its signal aborts) the subscription goes, so the
 * agent's next chunk finds no responder and the agent stops reading the log.
 */
export class LogStreamClient {
  constructor(
    private readonly options: { connection: () => Promise<NatsConnection>; control: AgentControl; limits: LogLimits },
  ) {}

  async open(serverId: string, target: LogTarget, options: LogStreamOptions, signal: AbortSignal): Promise<AsyncGenerator<LogChunk>> {
    let nc: NatsConnection;
    try {
      nc = await this.options.connection();
    } catch {
      throw new AgentUnreachable(serverId, 'NATS cannot be reached');
    }
    const streamId = randomBytes(16).toString('hex');
    const subscription = nc.subscribe(logStreamSubject(serverId, streamId));
    const { limits } = this.options;
    try {
      const reply = await this.options.control.request(serverId, {
        request: {
          $case: 'logs',
          value: {
            streamId,
            serviceName: target.serviceName ?? '',
            containerId: target.containerId ?? '',
            tail: options.tail,
            sinceUnix: String(options.sinceUnix),
            follow: options.follow,
            maxBytes: String(limits.maxBytes),
            maxLinesPerSecond: limits.maxLinesPerSecond,
            maxDurationMs: limits.maxDurationMs,
            expectKind: target.owner.kind,
            expectId: target.owner.id,
          },
        },
      });
      if (reply.error !== '') throw new DomainError('BAD_REQUEST', `The agent of ${serverLabel(serverId)} could not stream the log: ${reply.error}`);
    } catch (err) {
      subscription.unsubscribe();
      throw err;
    }
    return chunks(subscription, signal, limits.maxBytes);
  }
}

async function* chunks(subscription: Subscription, signal: AbortSignal, maxBytes: number): AsyncGenerator<LogChunk> {
  let silence: NodeJS.Timeout | undefined;
  let gone = false;
  const close = () => subscription.unsubscribe();
  const watch = () => {
    clearTimeout(silence);
    silence = setTimeout(() => {
      gone = true;
      close();
    }, SILENCE_MS);
  };
  signal.addEventListener('abort', close, { once: true });
  watch();
  // The agent enforces the byte limit; this bounds what a misbehaving one could send.
  let bytes = 0;
  // The chunk the caller is taking: answered `stop` when the caller goes away meanwhile, so the agent stops at once.
  let pending: Msg | null = null;
  try {
    for await (const msg of subscription) {
      pending = msg;
      watch();
      const chunk = LogChunk.decode(msg.data);
      for (const line of chunk.lines) bytes += line.text.length + 1;
      if (bytes > maxBytes * 1.1 + 65_536) {
        msg.respond(new TextEncoder().encode('stop'));
        yield { lines: [], end: true, reason: `limit: ${maxBytes} bytes sent` };
        return;
      }
      yield chunk;
      if (signal.aborted) return;
      pending = null;
      msg.respond(new Uint8Array(0));
      if (chunk.end) return;
    }
    if (gone) yield { lines: [], end: true, reason: 'the agent stopped sending' };
  } finally {
    pending?.respond(new TextEncoder().encode('stop'));
    clearTimeout(silence);
    signal.removeEventListener('abort', close);
    close();
  }
}
