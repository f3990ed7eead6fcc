/**
 * Which addresses the platform may connect to when it fetches something a user (or the
 * operator) named: a git repository, a template catalog, later webhooks, S3, AI and forge
 * endpoints. Judged on IP addresses, after resolving: a host name is only as safe as what
 * it resolves to.
 *
 * - Always refused: unspecified (0.0.0.0/8, ::), link-local (169.254.0.0/16, fe80::/10),
 *   cloud metadata (169.254.169.254, 100.100.100.200, fd00:ec2::254), multicast, broadcast
 *   and the reserved 240.0.0.0/4.
 * - Refused unless the operator allows private destinations (`SKIFF_OUTBOUND_ALLOW_PRIVATE`):
 *   loopback, private (RFC 1918), shared (CGNAT 100.64.0.0/10), unique-local (fc00::/7),
 *   site-local, and the other special-purpose ranges that are not the public internet
 *   (documentation, benchmarking, IETF protocol assignments, Teredo, discard, reserved IPv6).
 * - An IPv4 address inside an IPv6 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64
 *   64:ff9b::/96, 6to4 2002::/16) is judged as that IPv4 address.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { ipv6Groups } from '@skiff/domain';

/** The environment variable (control plane) that allows private and loopback destinations. */
export const ALLOW_PRIVATE_ENV = 'SKIFF_OUTBOUND_ALLOW_PRIVATE';

export interface OutboundPolicy {
  /** Loopback, private and other non-public addresses may be connected to. */
  allowPrivate: boolean;
}

export const PUBLIC_ONLY: OutboundPolicy = { allowPrivate: false };

interface Range {
  /** First address as a 32-bit number, and prefix length. */
  base: number;
  bits: number;
  name: string;
  always: boolean;
}

const v4 = (text: string) => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const range = (cidr: string, name: string, always: boolean): Range => {
  const [base, bits] = cidr.split('/') as [string, string];
  return { base: v4(base), bits: Number(bits), name: `${name} (${cidr})`, always };
};

/** Most specific first: the first range holding the address names its rule. */
const V4_RANGES: Range[] = [
  range('169.254.169.254/32', 'cloud metadata addresses', true),
  range('100.100.100.200/32', 'cloud metadata addresses', true),
  range('255.255.255.255/32', 'the broadcast address', true),
  range('0.0.0.0/8', 'unspecified ("this network") addresses', true),
  range('169.254.0.0/16', 'link-local addresses', true),
  range('224.0.0.0/4', 'multicast addresses', true),
  range('240.0.0.0/4', 'reserved addresses', true),
  range('127.0.0.0/8', 'loopback addresses', false),
  range('10.0.0.0/8', 'private addresses', false),
  range('172.16.0.0/12', 'private addresses', false),
  range('192.168.0.0/16', 'private addresses', false),
  range('100.64.0.0/10', 'shared (CGNAT) addresses', false),
  range('192.0.0.0/24', 'IETF protocol addresses', false),
  range('192.0.2.0/24', 'documentation addresses', false),
  range('198.51.100.0/24', 'documentation addresses', false),
  range('203.0.113.0/24', 'documentation addresses', false),
  range('198.18.0.0/15', 'benchmarking addresses', false),
];

interface Verdict {
  rule: string;
  always: boolean;
}

function ipv4Verdict(address: string): Verdict | null {
  const n = v4(address);
  for (const r of V4_RANGES) {
    const size = 2 ** (32 - r.bits);
    if (n >= r.base && n < r.base + size) return { rule: r.name, always: r.always };
  }
  return null;
}

const METADATA_V6 = ipv6Groups('fd00:ec2::254');

function ipv6Verdict(address: string): Verdict | null {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const dotted = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  const inner = (v4text: string, form: string): Verdict | null => {
    const verdict = ipv4Verdict(v4text);
    return verdict && { rule: verdict.rule.replace(/\)$/, `, ${form})`), always: verdict.always };
  };
  if (zeros(0, 8)) return { rule: 'unspecified addresses (::)', always: true };
  if (zeros(0, 7) && g[7] === 1) return { rule: 'loopback addresses (::1)', always: false };
  if (METADATA_V6.every((x, i) => x === g[i])) return { rule: 'cloud metadata addresses (fd00:ec2::254)', always: true };
  if (zeros(0, 5) && g[5] === 0xffff) return inner(dotted(g[6]!, g[7]!), 'IPv4-mapped');
  if (zeros(0, 6)) return inner(dotted(g[6]!, g[7]!), 'IPv4-compatible');
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return inner(dotted(g[6]!, g[7]!), 'NAT64');
  if (g[0] === 0x2002) return inner(dotted(g[1]!, g[2]!), '6to4');
  if ((g[0]! & 0xffc0) === 0xfe80) return { rule: 'link-local addresses (fe80::/10)', always: true };
  if ((g[0]! & 0xff00) === 0xff00) return { rule: 'multicast addresses (ff00::/8)', always: true };
  if ((g[0]! & 0xfe00) === 0xfc00) return { rule: 'unique-local addresses (fc00::/7)', always: false };
  if ((g[0]! & 0xffc0) === 0xfec0) return { rule: 'site-local addresses (fec0::/10)', always: false };
  if (g[0] === 0x2001 && g[1] === 0xdb8) return { rule: 'documentation addresses (2001:db8::/32)', always: false };
  if (g[0] === 0x2001 && g[1] === 0) return { rule: 'Teredo addresses (2001::/32)', always: false };
  if (g[0] === 0x100 && zeros(1, 4)) return { rule: 'discard addresses (100::/64)', always: false };
  if ((g[0]! & 0xe000) !== 0x2000) return { rule: 'addresses outside global unicast (2000::/3)', always: false };
  return null;
}

/**
 * Why the platform must not connect to this IP address under `policy`, or null when it may.
 * The reason names the rule (and, for what the operator can allow, the setting).
 */
export function addressProblem(address: string, policy: OutboundPolicy): string | null {
  const verdict = isIPv4(address) ? ipv4Verdict(address) : isIPv6(address) ? ipv6Verdict(address) : { rule: 'things that are not IP addresses', always: true };
  if (!verdict) return null;
  if (verdict.always) return `${verdict.rule} are refused`;
  if (policy.allowPrivate) return null;
  return `${verdict.rule} are refused (the operator allows them with ${ALLOW_PRIVATE_ENV}=1)`;
}

/** `SKIFF_OUTBOUND_ALLOW_PRIVATE` read strictly: unset, empty, `0` or `false` refuse; `1` or `true` allow. */
export function readOutboundPolicy(value: string | undefined): OutboundPolicy {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '' || text === '0' || text === 'false') return { allowPrivate: false };
  if (text === '1' || text === 'true') return { allowPrivate: true };
  throw new Error(`${ALLOW_PRIVATE_ENV} must be 1 or 0 (true or false): ${value}`);
}
