import type { Socket } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { randomIds } from '../ids.js';
import { errorBody } from './envelope.js';

/** How long a client may take to send its request line and headers (Node's own default is 60 s). */
export const HEADERS_TIMEOUT_MS = 20_000;
/** How long a client may take to send a whole request, an upload's body included (Node's default). */
export const REQUEST_TIMEOUT_MS = 300_000;
/** How long a refused connection stays open for the client to read its answer. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Serves the app over HTTP. A request Node's parser refuses before the app sees it (a request
 * line and headers over Node's 16 KiB, a malformed request, headers still arriving after
 * `headersTimeoutMs`) is answered in the error envelope, BAD_REQUEST, rather than by Node's
 * bare 431/400/408; the connection is closed, both ways: a client that keeps sending after
 * the answer holds no socket open.
 */
export function listen(
  app: Hono,
  options: { port: number; hostname: string; log: Logger; headersTimeoutMs?: number },
  onListening?: (port: number) => void,
): ServerType {
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const server = serve(
    {
      fetch: app.fetch,
      port: options.port,
      hostname: options.hostname,
      // Node checks the timeouts at this interval (30 s by default, which would add to the timeout).
      serverOptions: { headersTimeout, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: Math.min(5_000, headersTimeout) },
    },
    (info) => onListening?.(info.port),
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomIds('req');
    const message =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request line and headers are too large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? `The request did not arrive in time (its headers within ${headersTimeout / 1000} s, all of it within ${REQUEST_TIMEOUT_MS / 1000} s)`
          : 'The request is not valid HTTP';
    options.log.info({ requestId, status: 400, code: err.code }, 'request refused by the HTTP parser');
    const body = JSON.stringify(errorBody('BAD_REQUEST', requestId, message, [{ path: [], message }]));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  });
  return server;
}
