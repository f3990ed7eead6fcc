import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChannelSender, DeliveryError } from '../services/notifications/channels/channel-sender.js';

/** One message a sink received. */
export interface Received {
  path: string;
  idempotencyKey: string;
  body: Record<string, any>;
  at: number;
}

/**
 * An HTTP server on 127.0.0.1 that receives event messages as the test sender posts them.
 * Per path: answers queued statuses first (500…, then 200), or never answers (`hang`);
 * `dedupe` paths keep one message per idempotency key, as a service that honours it does.
 */
export class EventSink {
  readonly received: Received[] = [];
  /** Every request, duplicates included. */
  readonly requests: Received[] = [];
  private readonly statuses = new Map<string, number[]>();
  private readonly hanging = new Set<string>();
  private readonly delays = new Map<string, number>();
  private readonly dedupe = new Set<string>();
  private server!: Server;
  url = '';

  static async start(): Promise<EventSink> {
    const sink = new EventSink();
    sink.server = createServer((req, res) => void sink.handle(req, res));
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', resolve));
    sink.url = `http://127.0.0.1:${(sink.server.address() as AddressInfo).port}`;
    return sink;
  }

  answer(path: string, ...statuses: number[]): void {
    this.statuses.set(path, statuses);
  }

  hang(path: string): void {
    this.hanging.add(path);
  }

  /** Answers requests to `path` after `ms`. */
  slow(path: string, ms: number): void {
    this.delays.set(path, ms);
  }

  dedupeOn(path: string): void {
    this.dedupe.add(path);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = req.url ?? '/';
    const entry: Received = { path, idempotencyKey: String(req.headers['idempotency-key'] ?? ''), body: JSON.parse(Buffer.concat(chunks).toString('utf8')), at: Date.now() };
    this.requests.push(entry);
    if (this.hanging.has(path)) return;
    const delay = this.delays.get(path);
    if (delay) await new Promise((r) => setTimeout(r, delay));
    const status = this.statuses.get(path)?.shift() ?? 200;
    if (status === 200 && !(this.dedupe.has(path) && this.received.some((r) => r.path === path && r.idempotencyKey === entry.idempotencyKey))) {
      this.received.push(entry);
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The delivery engine's test sender (not a channel's wire format): POSTs the message as JSON
 * to the channel's `webhookUrl` with an `Idempotency-Key` header; a non-2xx answer is a
 * retryable DeliveryError.
 */
export const jsonSender: ChannelSender = async (target, message, { idempotencyKey, signal }) => {
  const url = String(target.secrets.webhookUrl);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ ...message, notificationId: target.notificationId }),
    signal,
  }).catch((err: unknown) => {
    throw new DeliveryError(`cannot reach the sink: ${err instanceof Error ? err.message : String(err)}`, true);
  });
  await res.body?.cancel();
  if (!res.ok) throw new DeliveryError(`the sink answered ${res.status}`, true);
};
