/**
 * Caddy's admin API over its unix socket (never TCP: ARCHITECTURE.md, "Reverse proxy").
 * Caddy refuses a request without a Host header; an empty one passes its origin check for a
 * unix socket, so node's default `Host: localhost` is turned off.
 */
import { createRequire } from 'node:module';

// Not `import … from 'node:http'`: the agent's one-file ESM bundle hoists every such import to
// its top, and the ESM namespace of node:http reads its lazy getters, loading undici (~4 MB)
// into every idle agent (lazy-load.spec.ts).
const { request } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export interface AdminAnswer {
  status: number;
  body: string;
}

/** No answer from the admin API: the socket is missing, refused, reset, or the deadline passed. */
export class AdminUnreachableError extends Error {
  override readonly name = 'AdminUnreachableError';
}

/** Bodies above this are cut (Caddy's answers to /load are a short JSON error or nothing). */
const MAX_BODY = 1 << 20;

export function adminRequest(
  socketPath: string,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: string; timeoutMs: number },
): Promise<AdminAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { Host: '' };
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(options.body);
    }
    const req = request(
      { socketPath, method, path, setHost: false, headers, signal: AbortSignal.timeout(Math.max(1, options.timeoutMs)) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < MAX_BODY) body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', (err) => reject(new AdminUnreachableError(`the admin API's answer broke off: ${err.message}`, { cause: err })));
      },
    );
    req.on('error', (err) => {
      const reason = err.name === 'AbortError' ? `no answer within ${options.timeoutMs} ms` : err.message;
      reject(new AdminUnreachableError(`Caddy's admin API is not reachable: ${reason}`, { cause: err }));
    });
    req.end(options.body);
  });
}

/** Caddy's reason from an error answer (`{"error": "..."}`), or the raw text. */
export function caddyReason(answer: AdminAnswer): string {
  try {
    const parsed = JSON.parse(answer.body) as { error?: unknown };
    if (typeof parsed?.error === 'string' && parsed.error !== '') return parsed.error;
  } catch {
    // not JSON: the text itself
  }
  const text = answer.body.trim();
  return text !== '' ? text : `HTTP ${answer.status}`;
}
