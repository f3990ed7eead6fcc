/**
 * Resolving a destination once, checking every address of the answer, and handing the
 * checked addresses to whoever connects (the pinned fetch, git's options), so a name cannot
 * resolve somewhere else between the check and the connection.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { outboundHostProblem, trimChar } from '@skiff/domain';
import { addressProblem, type OutboundPolicy } from './address-policy.js';

/** A host's addresses (IPv4 and IPv6, as the system resolver answers). */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A destination the platform was asked to connect to and must not (the reason names the rule). */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
}

export interface PinnedHost {
  /** The host as named (lower case, no brackets, no trailing dot). */
  host: string;
  port: number;
  /** Every address the name resolved to, each checked; connect to these only. */
  addresses: string[];
}

/** A URL's or scp-like git URL's host, normalised as resolvers read it (`2130706433` and `0x7f.1` are 127.0.0.1). */
export function normalHost(hostname: string): string {
  let host = trimChar(hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1'), '.', 'end');
  if (isIP(host)) return host;
  try {
    host = trimChar(new URL(`http://${host}/`).hostname, '.', 'end');
  } catch {
    // Not a host the URL parser takes: resolved as written (and refused by the resolver).
  }
  return host.replace(/^\[(.*)\]$/, '$1');
}

/**
 * The checked addresses of `host`: an address literal is judged as it is; a name is resolved
 * with `resolver` and every address of the answer must pass (a mixed answer, one public and
 * one private address, is refused: the connection could take either).
 */
export async function resolvePinned(hostname: string, port: number, policy: OutboundPolicy, resolver: Resolver = systemResolver): Promise<PinnedHost> {
  const host = normalHost(hostname);
  const named = outboundHostProblem(host);
  if (named) throw new OutboundRefused(`${host}: ${named}`);
  if (isIP(host)) {
    const problem = addressProblem(host, policy);
    if (problem) throw new OutboundRefused(`${host}: ${problem}`);
    return { host, port, addresses: [host] };
  }
  let addresses: string[];
  try {
    addresses = await resolver(host);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new OutboundRefused(code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA' ? `${host} does not resolve` : `${host} could not be resolved: ${(error as Error).message}`);
  }
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
  for (const address of addresses) {
    const problem = addressProblem(address, policy);
    if (problem) throw new OutboundRefused(`${host} resolves to ${address}: ${problem}`);
  }
  return { host, port, addresses };
}

/** The checked destination of an http(s) URL (default ports 80 and 443). */
export function resolveUrl(url: URL, policy: OutboundPolicy, resolver?: Resolver): Promise<PinnedHost> {
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return resolvePinned(url.hostname, port, policy, resolver);
}
