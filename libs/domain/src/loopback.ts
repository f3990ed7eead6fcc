/**
 * Which agent-channel addresses stay on this machine: the only ones either side may use
 * without TLS (docs/security.md, "Agents").
 */
import { isIPv4, isIPv6 } from 'node:net';

/** `localhost`, 127.0.0.0/8 or ::1 (brackets allowed). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
  return false;
}

/**
 * The host of a gRPC target (`host:port`, `[v6]:port`, `dns:///host:port`, `ipv4:…`, `ipv6:…`),
 * or null for `unix:` targets (a socket on this machine).
 */
export function grpcTargetHost(target: string): string | null {
  if (target.startsWith('unix:')) return null;
  const rest = target.replace(/^(?:dns:(?:\/\/[^/]*)?\/|ipv4:|ipv6:)/, '');
  if (rest.startsWith('[')) return rest.slice(1, Math.max(1, rest.indexOf(']')));
  const colon = rest.lastIndexOf(':');
  // No port, or a bare IPv6 address (several colons, no brackets).
  if (colon < 0 || rest.indexOf(':') !== colon) return rest;
  return rest.slice(0, colon);
}
