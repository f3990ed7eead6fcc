/**
 * HTTP(S) requests to a destination a user or the operator named, connected only to the
 * addresses `resolvePinned` checked (TLS still verifies the name, and Host carries it), with
 * no redirect followed (a 3xx answer with a Location is an error naming it), a size limit on
 * the answer and one deadline for everything.
 */
import type { LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { isIP, isIPv6 } from 'node:net';
import { outboundUrlProblem } from '@skiff/domain';
import type { OutboundPolicy } from './address-policy.js';
import { OutboundRefused, type PinnedHost, type Resolver, resolveUrl } from './resolve.js';

const builtin = createRequire(import.meta.url);

/** A request that did not bring a complete answer (refused destination, redirect, limit, deadline, network). */
export class OutboundFetchError extends Error {
  override name = 'OutboundFetchError';
  constructor(
    message: string,
    /** true: trying again cannot help (a refused destination, a malformed URL, a redirect). */
    readonly permanent = false,
  ) {
    super(message);
  }
}

export interface OutboundRequest {
  policy: OutboundPolicy;
  /** The largest answer body taken. */
  maxBytes: number;
  /** For the whole request: resolving, connecting and reading the answer. */
  timeoutMs: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Default: the system resolver. */
  resolver?: Resolver;
  /** Ends the request early (an answer in progress is dropped). */
  signal?: AbortSignal;
}

export interface OutboundAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export async function outboundFetch(url: string, request: OutboundRequest): Promise<OutboundAnswer> {
  const problem = outboundUrlProblem(url);
  if (problem) throw new OutboundFetchError(problem, true);
  const target = new URL(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const cancel = () => controller.abort();
  if (request.signal?.aborted) controller.abort();
  request.signal?.addEventListener('abort', cancel);
  try {
    const pinned = await Promise.race([
      resolveUrl(target, request.policy, request.resolver),
      new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    ]);
    return await send(target, pinned, request, controller.signal);
  } catch (error) {
    if (request.signal?.aborted) throw new OutboundFetchError('the request was cancelled');
    if (controller.signal.aborted) throw new OutboundFetchError(`no complete answer within ${request.timeoutMs} ms`);
    if (error instanceof OutboundFetchError) throw error;
    if (error instanceof OutboundRefused) throw new OutboundFetchError(error.message, true);
    throw new OutboundFetchError(describeNetworkError(error));
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', cancel);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Answers the checked addresses, whatever the name: no second resolution. */
function pinnedLookup(pinned: PinnedHost) {
  const all = pinned.addresses.map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }));
  return (_hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    if (options.all) callback(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
}

function send(target: URL, pinned: PinnedHost, request: OutboundRequest, signal: AbortSignal): Promise<OutboundAnswer> {
  // Not `import … from 'node:http(s)'`: the agent bundles this library into one ESM file, which
  // hoists such imports to its top, and the ESM namespace of node:http reads its lazy getters,
  // loading undici (~4 MB) into every idle agent (apps/agent/src/lazy-load.spec.ts).
  const requester = target.protocol === 'https:' ? (builtin('node:https') as typeof import('node:https')).request : (builtin('node:http') as typeof import('node:http')).request;
  return new Promise<OutboundAnswer>((resolve, reject) => {
    const req = requester(
      target,
      {
        method: request.method ?? 'GET',
        signal,
        // An address literal is connected to as it is (it was judged as such); a name only through the pin.
        ...(isIP(pinned.host) ? {} : { lookup: pinnedLookup(pinned) }),
        headers: request.headers,
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          res.resume();
          const where = URL.parse(location, target.href)?.toString() ?? JSON.stringify(location);
          reject(new OutboundFetchError(`redirected to ${where} (HTTP ${status}); redirects are not followed`, true));
          return;
        }
        readBody(res, request.maxBytes).then((body) => resolve({ status, headers: res.headers, body }), reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new OutboundFetchError(`the answer is larger than ${maxBytes} bytes`);
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        res.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    res.on('error', reject);
    // Settles nothing after 'end'; otherwise the answer was cut off (a reset, the deadline).
    res.on('close', () => reject(new OutboundFetchError('the connection closed before the answer was complete')));
    res.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function describeNetworkError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET') return 'the connection was reset';
  if (error instanceof Error && error.message) return error.message;
  return 'the request failed';
}
