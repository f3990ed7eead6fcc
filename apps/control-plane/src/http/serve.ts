import type { Socket } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { randomIds } from '../ids.js';
import { errorBody } from './envelope.js';

/**
 * Serves the app over HTTP. A request Node's parser refuses before the app sees it (a request
 * line and headers over Node's 16 KiB, a malformed request) is answered in the error envelope,
 * BAD_REQUEST, rather than by Node's bare 431/400; the connection is closed.
 */
export function listen(app: Hono, options: { port: number; hostname: string; log: Logger }, onListening?: (port: number) => void): ServerType {
  const server = serve({ fetch: app.fetch, port: options.port, hostname: options.hostname }, (info) => onListening?.(info.port));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomIds('req');
    const message = err.code === 'HPE_HEADER_OVERFLOW' ? 'The request line and headers are too large' : 'The request is not valid HTTP';
    options.log.info({ requestId, status: 400, code: err.code }, 'request refused by the HTTP parser');
    const body = JSON.stringify(errorBody('BAD_REQUEST', requestId, message, [{ path: [], message }]));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
