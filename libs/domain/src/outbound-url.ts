import { isIP, isIPv4, isIPv6 } from 'node:net';
import { trimChar } from './trim.js';

/**
 * Host names of cloud instance-metadata services. A URL the platform will fetch (an AI
 * endpoint, a forge API) must never point at them: they hand out the host's credentials.
 */
const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Metadata services reached by address outside the link-local range (Alibaba Cloud, AWS over IPv6). */
const METADATA_IPV4 = new Set(['100.100.100.200']);
const METADATA_IPV6 = ['fd00:ec2::254'];

function ipv4Octets(text: string): number[] {
  return text.split('.').map(Number);
}

/** The 8 groups of an IPv6 address (valid per `isIPv6`), with an embedded dotted IPv4 tail expanded. */
export function ipv6Groups(text: string): number[] {
  let s = text.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const tail = /^(\d+\.\d+\.\d+\.\d+)$/.exec(s.slice(s.lastIndexOf(':') + 1));
  if (tail) {
    const [a, b, c, d] = ipv4Octets(tail[1]!);
    s = s.slice(0, -tail[1]!.length) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
}

function ipv4Problem(text: string): string | null {
  const [a, b] = ipv4Octets(text);
  if (a === 169 && b === 254) return 'link-local addresses (169.254.0.0/16) are refused';
  if (METADATA_IPV4.has(text)) return 'cloud metadata addresses are refused';
  return null;
}

function ipv6Problem(text: string): string | null {
  const g = ipv6Groups(text);
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local addresses (fe80::/10) are refused';
  if (METADATA_IPV6.some((m) => ipv6Groups(m).every((x, i) => x === g[i]))) return 'cloud metadata addresses are refused';
  // An IPv4 address carried inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d).
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const embedded =
    (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) || (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6));
  if (embedded) {
    const v4 = [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
    return ipv4Problem(v4);
  }
  return null;
}

/**
 * Why a URL the platform is asked to call must be refused, or null when it may be stored.
 * Only http(s) URLs are taken. Link-local (169.254.0.0/16, fe80::/10) and cloud-metadata
 * addresses are always refused, also when an IPv4 address hides inside an IPv6 one; numeric
 * host spellings (`http://2852039166/`) are normalised by the URL parser before the check.
 * Loopback and private ranges are not judged here (an operator setting decides those), and a
 * name that resolves to a refused address can only be caught when the request is made.
 */
export function outboundUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry credentials';
  return outboundHostProblem(url.hostname);
}

/**
 * Why a host the platform (or an agent) is asked to connect to must be refused, or null:
 * link-local and cloud-metadata addresses and names, as `outboundUrlProblem` judges a URL's
 * host. `host` is a URL's hostname (an IPv6 address may keep its brackets) or a bare host as
 * an scp-like git URL names it; numeric IPv4 spellings (`2852039166`, `0xa9.0xfe.0xa9.0xfe`),
 * which resolvers accept too, are normalised by the WHATWG URL parser first.
 */
export function outboundHostProblem(hostname: string): string | null {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = trimChar(host, '.', 'end');
  if (!host) return 'must name a host';
  if (!isIPv6(host)) {
    try {
      host = trimChar(new URL(`http://${host}/`).hostname, '.', 'end');
    } catch {
      // Not a host the URL parser takes: judged as written.
    }
  }
  if (METADATA_HOSTS.has(host)) return 'cloud metadata addresses are refused';
  if (isIPv4(host)) return ipv4Problem(host);
  if (isIPv6(host)) return ipv6Problem(host);
  return null;
}

/**
 * A server address: an IPv4 or IPv6 address, or a host name (letters, digits and hyphens in
 * dot-separated labels of at most 63 characters, 253 in all, no label starting or ending
 * with a hyphen, the last label not all digits).
 */
export function isServerAddress(text: string): boolean {
  if (isIP(text) !== 0) return true;
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  // An all-digit last label reads as a shortened IPv4 address to resolvers (`10.1` is 10.0.0.1).
  if (/^\d+$/.test(labels[labels.length - 1]!)) return false;
  return labels.every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}
