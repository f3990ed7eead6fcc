/**
 * Answers a LogsRequest (proto ControlRequest.logs): checks that the target is the Skiff
 * workload the control plane named, answers at once, then streams the target's runtime log
 * as LogChunk requests to `agent.<server>.logs.<stream_id>`, one at a time (each waits for the
 * control plane's answer: its backpressure). The stream ends when a chunk is not answered
 * (the client went away), at the request's byte or duration limit, or, without `follow`, at
 * the end of the log; lines above the rate limit wait for the next second. The last chunk
 * (`end`, with the reason) is published without waiting for an answer. In follow mode an
 * empty chunk goes out every `heartbeatMs` so that a client gone while the log is quiet is
 * noticed, and every `presenceMs` the agent checks that the target still exists: a followed
 * log of a service or container that was removed ends within seconds with that reason (the
 * engine keeps a removed service's followed log open). Log lines are the user's data: they
 * never reach the agent's own log.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { logStreamSubject } from '@skiff/domain';
import { LogChunk, type ControlReply, type LogsRequest, type RuntimeLogLine } from '@skiff/proto';
import type { Logger } from 'pino';
import type { Readable } from 'node:stream';
import type { ContainerOps } from '../docker/container-ops.js';
import { LogFrames } from './log-frames.js';

export interface LogStreamsDeps {
  nc: NatsConnection;
  serverId: string;
  ops: ContainerOps;
  log: Logger;
  /** How long the control plane has to answer one chunk (default 10 s). */
  chunkTimeoutMs?: number;
  /** Follow mode: the longest quiet time before an empty chunk (default 2 s). */
  heartbeatMs?: number;
  /** Lines are gathered this long, or up to CHUNK_BYTES, before they go (default 200 ms). */
  batchMs?: number;
  /** Follow mode: how often the agent checks that the target still exists (default 2 s). */
  presenceMs?: number;
}

const STREAM_ID = /^[A-Za-z0-9_-]{8,64}$/;
const CHUNK_BYTES = 32 * 1024;

export class LogStreams {
  private readonly running = new Map<string, (reason: string) => void>();

  constructor(private readonly deps: LogStreamsDeps) {}

  /** The streams running now. */
  get active(): number {
    return this.running.size;
  }

  /** Ends every stream (the agent stops). */
  stopAll(): void {
    for (const stop of this.running.values()) stop('the agent stops');
  }

  async start(request: LogsRequest): Promise<ControlReply> {
    if (!STREAM_ID.test(request.streamId) || this.running.has(request.streamId)) return refused('stream_id is not a new stream id');
    if ((request.serviceName === '') === (request.containerId === '')) return refused('name exactly one of service_name and container_id');
    if (request.maxBytes === '0' || request.maxLinesPerSecond === 0 || request.maxDurationMs === 0) return refused('the stream limits must be set');
    const target = request.serviceName !== '' ? { serviceName: request.serviceName } : { containerId: request.containerId };
    const labels = await this.deps.ops.labelsOf(target);
    if (!labels || labels['skiff.kind'] !== request.expectKind || labels['skiff.id'] !== request.expectId) {
      return refused(`no Skiff ${target.serviceName ? `service ${target.serviceName}` : `container ${target.containerId}`} of that workload on this server`);
    }
    const source = await this.deps.ops.logs(target, { tail: request.tail, sinceUnix: Number(request.sinceUnix), follow: request.follow });
    void this.pump(request, source.stream, source.tty);
    return { commandIds: [], error: '' };
  }

  private async pump(request: LogsRequest, stream: Readable, tty: boolean): Promise<void> {
    const { nc, serverId, log } = this.deps;
    const subject = logStreamSubject(serverId, request.streamId);
    const timeout = this.deps.chunkTimeoutMs ?? 10_000;
    const frames = new LogFrames(tty);
    const maxBytes = Number(request.maxBytes);
    let reason: string | null = null;
    let sentBytes = 0;
    let batch: RuntimeLogLine[] = [];
    let batchBytes = 0;
    let lastSent = Date.now();
    let second = { start: Date.now(), lines: 0 };
    let sending: Promise<void> = Promise.resolve();
    let readerGone = false;

    const stop = (why: string) => {
      reason ??= why;
      stream.destroy();
    };
    this.running.set(request.streamId, stop);
    const send = (chunk: LogChunk): Promise<void> => {
      sending = sending.then(async () => {
        if (readerGone) return;
        try {
          const answer = await nc.request(subject, LogChunk.encode(chunk).finish(), { timeout });
          lastSent = Date.now();
          if (new TextDecoder().decode(answer.data) === 'stop') {
            readerGone = true;
            stop('stopped by the control plane');
          }
        } catch {
          readerGone = true;
          stop('the control plane no longer reads the stream');
        }
      });
      return sending;
    };
    const flush = () => {
      if (batch.length === 0) return sending;
      const lines = batch;
      batch = [];
      batchBytes = 0;
      return send({ lines, end: false, reason: '' });
    };
    const ticker = setInterval(() => {
      if (batch.length > 0) void flush();
      else if (request.follow && Date.now() - lastSent >= (this.deps.heartbeatMs ?? 2_000)) void send({ lines: [], end: false, reason: '' });
    }, this.deps.batchMs ?? 200);
    const deadline = setTimeout(() => stop(`limit: the stream lasted its longest (${Math.round(request.maxDurationMs / 1000)} s)`), request.maxDurationMs);
    const gone = () => this.gone(request);
    const presence = request.follow
      ? setInterval(() => {
          void gone().then((why) => why !== null && stop(why));
        }, this.deps.presenceMs ?? 2_000)
      : undefined;

    const take = async (line: RuntimeLogLine): Promise<void> => {
      const size = Buffer.byteLength(line.text) + 1;
      if (sentBytes + size > maxBytes) return stop(`limit: ${maxBytes} bytes sent`);
      const now = Date.now();
      if (now - second.start >= 1000) second = { start: now, lines: 0 };
      if (second.lines >= request.maxLinesPerSecond) {
        await flush();
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, second.start + 1000 - Date.now())));
        second = { start: Date.now(), lines: 0 };
      }
      second.lines += 1;
      sentBytes += size;
      batch.push(line);
      batchBytes += size;
      if (batchBytes >= CHUNK_BYTES) await flush();
    };

    try {
      for await (const chunk of stream) {
        for (const line of frames.push(chunk as Buffer)) {
          if (reason !== null) break;
          await take(line);
        }
        if (reason !== null) break;
        await sending;
      }
      if (reason === null) for (const line of frames.flush()) await take(line);
    } catch (err) {
      if (reason === null) reason = `the log could not be read: ${(err as Error).message}`;
    } finally {
      clearInterval(ticker);
      clearInterval(presence);
      clearTimeout(deadline);
      stream.destroy();
    }
    // A followed container log ends by itself when the container goes: say so.
    if (reason === null && request.follow) reason = await gone();
    reason ??= 'end of log';
    await flush();
    await sending;
    // The last chunk needs no answer: a reader that is gone misses nothing it could act on.
    if (!readerGone) nc.publish(subject, LogChunk.encode({ lines: [], end: true, reason }).finish());
    this.running.delete(request.streamId);
    log.info({ streamId: request.streamId, reason, bytes: sentBytes }, 'log stream ended');
  }

  /** Why the stream's target no longer exists, or null while it does (or cannot be checked now). */
  private async gone(request: LogsRequest): Promise<string | null> {
    const target = request.serviceName !== '' ? { serviceName: request.serviceName } : { containerId: request.containerId };
    try {
      const labels = await this.deps.ops.labelsOf(target);
      if (labels && labels['skiff.id'] === request.expectId) return null;
    } catch {
      return null;
    }
    return target.serviceName ? `the service ${target.serviceName} was removed` : `the container ${target.containerId} was removed`;
  }
}

function refused(error: string): ControlReply {
  return { commandIds: [], error };
}
