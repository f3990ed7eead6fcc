import { type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

export type ProxyAnswer =
  | { ok: true; status: number; body: string; headers: IncomingHttpHeaders; peerFingerprint: string | null }
  | { ok: false; error: string };

export interface ProxyRequest {
  /** The proxy's host port on 127.0.0.1. */
  port: number;
  /** Sent as the Host header and, over TLS, as the SNI name. */
  host: string;
  path?: string;
  /** `user:password` for basic auth. */
  auth?: string;
  /** More request headers. */
  headers?: Record<string, string>;
  /** Speak TLS, trusting only `ca` when given (Node's default roots otherwise). */
  tls?: { ca?: string };
}

/**
 * One request through the reverse proxy, on a fresh connection (a config load closes
 * kept-alive ones). A failure to connect or to verify the certificate answers its error
 * code instead of throwing.
 */
export function throughProxy(r: ProxyRequest): Promise<ProxyAnswer> {
  return new Promise((resolve) => {
    const options = {
      host: '127.0.0.1',
      port: r.port,
      path: r.path ?? '/',
      agent: false as const,
      timeout: 3_000,
      headers: { ...r.headers, host: r.host, ...(r.auth ? { authorization: `Basic ${Buffer.from(r.auth).toString('base64')}` } : {}) },
    };
    const onResponse = (res: IncomingMessage) => {
      const socket = res.socket as TLSSocket;
      const peerFingerprint = r.tls ? (socket.getPeerCertificate?.().fingerprint256 ?? null) : null;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ ok: true, status: res.statusCode ?? 0, body: body.trim(), headers: res.headers, peerFingerprint }));
    };
    const req = r.tls
      ? httpsRequest({ ...options, servername: r.host, ...(r.tls.ca ? { ca: r.tls.ca } : {}) }, onResponse)
      : httpRequest(options, onResponse);
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, error: err.code ?? err.message }));
    req.end();
  });
}

/**
 * A check for waitFor: the request answers `status` (and `body` when given). A different
 * answer throws, so a timeout names the last one seen.
 */
export const answers =
  (r: ProxyRequest, status: number, body?: string) => async (): Promise<true> => {
    const res = await throughProxy(r);
    if (res.ok && res.status === status && (body === undefined || res.body === body)) return true;
    throw new Error(`${r.host}${r.path ?? '/'} answered ${res.ok ? `${res.status} ${JSON.stringify(res.body.slice(0, 200))}` : res.error}`);
  };
