import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, isIPv4 } from 'node:net';
import { ipv6Groups, isPublicIPv4, outboundHostProblem, outboundUrlProblem } from '@skiff/domain';

/** A catalog file that could not be fetched, with the reason (shown to the caller). */
export class CatalogFetchError extends Error {
  override name = 'CatalogFetchError';
}

/** Why the platform must not connect to an address, or null when it may. */
export type AddressRule = (address: string) => string | null;

/**
 * The operator's catalog (SKIFF_TEMPLATES_URL): the outbound-URL rules only, so a catalog on
 * the operator's own network works; link-local and cloud-metadata addresses are refused.
 */
export const operatorAddresses: AddressRule = (address) => outboundHostProblem(address);

/** A catalog a caller names (`baseUrl`): public addresses only. */
export const publicAddresses: AddressRule = (address) =>
  outboundHostProblem(address) ??
  (isPublicAddress(address) ? null : 'private, loopback and other non-public addresses are refused (only the configured catalog, SKIFF_TEMPLATES_URL, may be on a private network)');

function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return isPublicIPv4(address);
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return isPublicIPv4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.'));
  // Global unicast (2000::/3) without documentation (2001:db8::/32) and 6to4 (2002::/16, an IPv4 inside).
  return (g[0]! & 0xe000) === 0x2000 && !(g[0] === 0x2001 && g[1] === 0xdb8) && g[0] !== 0x2002;
}

export interface FetchLimits {
  /** The largest answer body taken. */
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  /** Which addresses may be connected to, checked on the resolved addresses of every hop. */
  addresses: AddressRule;
}

const MAX_REDIRECTS = 3;

/**
 * GETs a text file over http(s): every hop's URL passes the outbound-URL rules and its host's
 * resolved addresses pass `limits.addresses` at connection time (so a name cannot resolve
 * somewhere else after the check); at most 3 redirects; the body must be UTF-8 within the size
 * limit; all within the deadline.
 */
export async function fetchCatalogText(url: string, limits: FetchLimits): Promise<string> {
  const controller = new AbortController();
  let current = url;
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    for (let hop = 0; ; hop++) {
      const answer = await getOnce(current, limits, controller.signal).catch((error: unknown) => {
        const reason = controller.signal.aborted
          ? `no complete answer within ${limits.timeoutMs} ms`
          : error instanceof CatalogFetchError
            ? error.message
            : describeNetworkError(error);
        throw new CatalogFetchError(hop === 0 ? reason : `redirected to ${current}: ${reason}`);
      });
      if (answer.kind === 'body') return answer.text;
      if (hop === MAX_REDIRECTS) throw new CatalogFetchError(`more than ${MAX_REDIRECTS} redirects`);
      current = answer.location;
    }
  } finally {
    clearTimeout(timer);
  }
}

type Answer = { kind: 'body'; text: string } | { kind: 'redirect'; location: string };

function getOnce(url: string, limits: FetchLimits, signal: AbortSignal): Promise<Answer> {
  const problem = outboundUrlProblem(url);
  if (problem) return Promise.reject(new CatalogFetchError(problem));
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // Node connects to an address literal without a lookup: judged here instead.
  if (isIP(host)) {
    const refused = limits.addresses(host);
    if (refused) return Promise.reject(new CatalogFetchError(refused));
  }
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req = request(target, { method: 'GET', signal, lookup: checkedLookup(limits.addresses), headers: { accept: 'application/json, text/plain, */*' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        const location = URL.parse(res.headers.location, target.href);
        if (location) resolve({ kind: 'redirect', location: location.toString() });
        else reject(new CatalogFetchError(`redirected to an invalid URL (HTTP ${status})`));
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(new CatalogFetchError(`answered HTTP ${status}`));
        return;
      }
      readBody(res, limits.maxBytes).then((text) => resolve({ kind: 'body', text }), reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function readBody(res: IncomingMessage, maxBytes: number): Promise<string> {
  const tooLarge = () => new CatalogFetchError(`the answer is larger than ${maxBytes} bytes`);
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
    res.on('close', () => reject(new CatalogFetchError('the connection closed before the answer was complete')));
    res.on('end', () => {
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
      } catch {
        reject(new CatalogFetchError('the answer is not UTF-8 text'));
      }
    });
  });
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing the connection when any resolved address breaks the rule. */
function checkedLookup(rule: AddressRule) {
  return (hostname: string, options: object, callback: LookupCallback) => {
    dnsLookup(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      for (const resolved of addresses) {
        const refused = rule(resolved);
        if (refused) return callback(new CatalogFetchError(`${hostname} resolves to ${resolved}: ${refused}`), address, family);
      }
      callback(null, address, family);
    });
  };
}

function describeNetworkError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${(error as { hostname?: string }).hostname ?? 'the host'} does not resolve`;
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET') return 'the connection was reset';
  if (error instanceof Error && error.message) return error.message;
  return 'the request failed';
}
