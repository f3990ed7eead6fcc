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
  return (await readBoundedBytes(request, maxBytes, deadlineMs)).toString('utf8');
}

/** The bytes of a request body, read as `readBoundedText` reads it (for a caller that decodes them itself). */
export async function readBoundedBytes(request: Request, maxBytes: number, deadlineMs?: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw bodyTooLarge(maxBytes);
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const expired =
    deadlineMs === undefined
      ? null
      : new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new BodyTooSlow(deadlineMs)), deadlineMs);
        });
  try {
    for (;;) {
      const { done, value } = await (expired ? Promise.race([reader.read(), expired]) : reader.read());
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        chunks.length = 0;
        reader.releaseLock();
        throw bodyTooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks, size);
}

/** The node request under a Hono context (@hono/node-server puts it in `env.incoming`); none in process. */
export function incomingOf(ctx: Context): IncomingMessage | undefined {
  const incoming = (ctx.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/**
 * `readBoundedBytes` on the node request itself: the same limits and deadline, without
 * building the web `Request` and its stream for the body (a third of a small POST's cost in
 * the server's HTTP layer). Past `maxBytes` or the deadline the request is paused, its rest
 * never read.
 */
export function readIncomingBytes(incoming: IncomingMessage, maxBytes: number, deadlineMs?: number): Promise<Buffer> {
  const declared = Number(incoming.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = deadlineMs === undefined ? undefined : setTimeout(() => {
      chunks.length = 0;
      incoming.pause();
      finish(new BodyTooSlow(deadlineMs));
    }, deadlineMs);
    const finish = (err: unknown, bytes?: Buffer) => {
      clearTimeout(timer);
      incoming.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (err) reject(err);
      else resolve(bytes!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        chunks.length = 0;
        incoming.pause();
        finish(bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, Buffer.concat(chunks, size));
    const onError = (err: Error) => finish(err);
    const onClose = () => finish(new Error('the client closed the connection before the body ended'));
    incoming.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    if (incoming.readableEnded) onEnd();
    else if (incoming.errored) onError(incoming.errored);
    else if (incoming.destroyed) onClose();
  });
}

/** The answer to a body not received within its deadline. */
export class BodyTooSlow extends DomainError {
  constructor(deadlineMs: number) {
    super('BAD_REQUEST', `The request body did not arrive within ${deadlineMs / 1000} s`, [{ path: [], message: `must arrive within ${deadlineMs / 1000} s` }]);
  }
}
