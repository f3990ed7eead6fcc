import { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { DomainError } from '../errors.js';

/** The most a JSON operation's body may hold. */
export const MAX_JSON_BODY_BYTES = 5 * 1024 * 1024;

/** The answer to a body over its limit (the error envelope has no 413: BAD_REQUEST, said plainly). */
export const bodyTooLarge = (maxBytes: number, what = 'The request body') =>
  new DomainError('BAD_REQUEST', `${what} is larger than ${maxBytes} bytes`, [{ path: [], message: `at most ${maxBytes} bytes` }]);

/**
 * Reads a request body as text, counting bytes as they arrive: a declared `content-length`
 * over `maxBytes` is refused before anything is read, and a body (chunked or not) that goes
 * past `maxBytes` is refused at the chunk that crosses it. Reading then stops (the rest is
 * never taken off the wire; the answer closes the connection: `mustClose`), so at most
 * `maxBytes` plus one chunk is ever held. With `deadlineMs`, a body still arriving then is refused
 * too (a sender that trickles bytes holds no request open past it).
 */
export async function readBoundedText(request: Request, maxBytes: number, deadlineMs?: number): Promise<string> {
  return (await readBodyBytes(request, maxBytes, deadlineMs)).toString('utf8');
}

/** The node request under a Hono context (@hono/node-server puts it in `env.incoming`); none in process. */
export function incomingOf(ctx: Context): IncomingMessage | undefined {
  const incoming = (ctx.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/**
 * The bytes of a request body, read as `readBoundedText` reads it, from the web `Request` or
 * from the node request itself (which spares building the web `Request` and its stream: a
 * third of a small POST's cost in the server's HTTP layer). Past `maxBytes` or the deadline
 * the source is stopped (a node request paused, a web reader released), its rest never read.
 */
export function readBodyBytes(from: Request | IncomingMessage, maxBytes: number, deadlineMs?: number): Promise<Buffer> {
  const declared = from instanceof IncomingMessage ? from.headers['content-length'] : from.headers.get('content-length');
  if (Number(declared ?? 0) > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  const feed = from instanceof IncomingMessage ? incomingFeed(from) : webFeed(from.body);
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let settled: { cut: boolean } | undefined;
    let stop: ((cut: boolean) => void) | undefined;
    const finish = (err: unknown, cut = false) => {
      if (settled) return;
      settled = { cut };
      clearTimeout(timer);
      stop?.(cut);
      if (err) {
        chunks.length = 0;
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const timer = deadlineMs === undefined ? undefined : setTimeout(() => finish(new BodyTooSlow(deadlineMs), true), deadlineMs);
    const sink: BodySink = {
      chunk(bytes) {
        size += bytes.byteLength;
        if (size > maxBytes) finish(bodyTooLarge(maxBytes), true);
        else chunks.push(bytes);
      },
      end: () => finish(undefined),
      fail: (err) => finish(err),
    };
    stop = feed(sink);
    if (settled) stop(settled.cut);
  });
}

/** What a body's source hands its chunks to, in order, then its end or failure. */
interface BodySink {
  chunk(bytes: Uint8Array): void;
  end(): void;
  fail(err: unknown): void;
}

/** Starts handing a body's chunks to `sink`; returns how to stop (`cut`: refused mid-body, the rest left unread). */
type BodyFeed = (sink: BodySink) => (cut: boolean) => void;

const webFeed = (body: ReadableStream<Uint8Array> | null): BodyFeed => (sink) => {
  if (!body) {
    sink.end();
    return () => {};
  }
  const reader = body.getReader();
  let stopped = false;
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (stopped) return;
        if (done) return sink.end();
        sink.chunk(value);
      }
    } catch (err) {
      if (!stopped) sink.fail(err);
    }
  })();
  return () => {
    stopped = true;
    reader.releaseLock();
  };
};

const incomingFeed = (incoming: IncomingMessage): BodyFeed => (sink) => {
  const onData = (chunk: Buffer) => sink.chunk(chunk);
  const onEnd = () => sink.end();
  const onError = (err: Error) => sink.fail(err);
  const onClose = () => sink.fail(new Error('the client closed the connection before the body ended'));
  incoming.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  if (incoming.readableEnded) onEnd();
  else if (incoming.errored) onError(incoming.errored);
  else if (incoming.destroyed) onClose();
  return (cut) => {
    incoming.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    if (cut) incoming.pause();
  };
};

/** The answer to a body not received within its deadline. */
export class BodyTooSlow extends DomainError {
  constructor(deadlineMs: number) {
    super('BAD_REQUEST', `The request body did not arrive within ${deadlineMs / 1000} s`, [{ path: [], message: `must arrive within ${deadlineMs / 1000} s` }]);
  }
}
