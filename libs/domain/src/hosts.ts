import { isIPv4 } from 'node:net';
import { domainToASCII } from 'node:url';
import { trimChar } from './trim.js';

/** A check's outcome: the normalized value, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A host name as a route matches it: lower-cased, without a trailing dot, international
 * names in their ASCII (punycode) form. Wildcards only as a leading `*.` over at least two
 * labels (`*.example.com`). Schemes, ports, paths, user info and spaces are refused, each
 * with a reason that says where that part belongs instead.
 */
export function normalizeHost(input: string): Checked<string> {
  let host = input.trim().toLowerCase();
  if (host === '') return { ok: false, reason: 'must not be empty' };
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(host)) return { ok: false, reason: 'must be a host name without a scheme (no https://)' };
  if (host.includes('/')) return { ok: false, reason: 'must be a host name without a path (use the path field)' };
  if (host.includes('@')) return { ok: false, reason: 'must be a host name without user info' };
  if (host.includes(':')) return { ok: false, reason: 'must be a host name without a port (use the port field)' };
  if (/[\s?#\\]/.test(host)) return { ok: false, reason: 'must be a host name (no spaces, ?, # or \\)' };
  if (host.endsWith('.')) host = host.slice(0, -1);
  let wildcard = false;
  if (host.startsWith('*.')) {
    wildcard = true;
    host = host.slice(2);
  }
  if (host.includes('*')) return { ok: false, reason: 'a wildcard is allowed only as a leading *.' };
  if (/[^\x00-\x7f]/.test(host)) {
    const ascii = domainToASCII(host);
    if (!ascii) return { ok: false, reason: 'is not a valid international host name' };
    host = ascii;
  }
  const labels = host.split('.');
  if (labels.some((l) => !LABEL.test(l))) {
    return { ok: false, reason: 'each label must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen' };
  }
  if (wildcard && labels.length < 2) return { ok: false, reason: 'a wildcard needs at least two labels after *. (*.example.com)' };
  const full = (wildcard ? '*.' : '') + host;
  if (full.length > 253) return { ok: false, reason: 'must be at most 253 characters' };
  return { ok: true, value: full };
}

/**
 * A route path (`path`, `internalPath`): starts with `/`, at most 2048 characters, no
 * query or fragment, no spaces or control characters, no `.` or `..` segments.
 */
export function checkRoutePath(path: string): Checked<string> {
  if (!path.startsWith('/')) return { ok: false, reason: 'must start with /' };
  if (path.length > 2048) return { ok: false, reason: 'must be at most 2048 characters' };
  if (/[\s\x00-\x1f\x7f?#\\]/.test(path)) return { ok: false, reason: 'must be a URL path (no spaces, control characters, ?, # or \\)' };
  if (path.split('/').some((s) => s === '..' || s === '.')) return { ok: false, reason: 'must not contain . or .. segments' };
  return { ok: true, value: path };
}

/** Whether a certificate for `names` (exact or `*.` one-label wildcards) serves `host`. */
export function hostCoveredBy(host: string, names: readonly string[]): boolean {
  const h = host.toLowerCase();
  return names.some((raw) => {
    const name = raw.toLowerCase();
    if (name === h) return true;
    if (!name.startsWith('*.')) return false;
    const base = name.slice(1); // ".example.com"
    if (h.startsWith('*.')) return false; // a wildcard host needs a wildcard name, matched exactly above
    return h.endsWith(base) && !h.slice(0, -base.length).includes('.') && h.length > base.length;
  });
}

const ipv4Octets = (ip: string) => ip.split('.').map(Number) as [number, number, number, number];

/**
 * An IPv4 address that the public internet can reach: not in the special-purpose ranges
 * (this network, private, shared, loopback, link-local, documentation, benchmarking,
 * multicast, reserved, broadcast).
 */
export function isPublicIPv4(ip: string): boolean {
  if (!isIPv4(ip)) return false;
  const [a, b, c] = ipv4Octets(ip);
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false;
  if (a === 198 && (b === 18 || b === 19)) return false;
  if (a === 198 && b === 51 && c === 100) return false;
  if (a === 203 && b === 0 && c === 113) return false;
  return true;
}

/**
 * The host of a generated domain: `<appName>-<suffix>-<ipv4 with dashes>.sslip.io`. The app
 * name is made a DNS label (lower-case letters, digits, hyphens) and shortened so the first
 * label stays within 63 characters.
 */
export function generatedHost(appName: string, ipv4: string, suffix: string): Checked<string> {
  if (!isIPv4(ipv4)) return { ok: false, reason: `${ipv4} is not an IPv4 address` };
  const dashed = ipv4.replace(/\./g, '-');
  const room = 63 - suffix.length - dashed.length - 2;
  const base = trimChar(trimChar(appName.toLowerCase().replace(/[^a-z0-9-]+/g, '-'), '-').slice(0, room), '-', 'end');
  if (!base) return { ok: false, reason: 'needs at least one letter or digit' };
  return { ok: true, value: `${base}-${suffix}-${dashed}.sslip.io` };
}

/**
 * The DNS names of an X.509 subjectAltName as node:crypto prints it
 * (`DNS:a.example, IP Address:1.2.3.4, DNS:"quoted, name"`), lower-cased.
 */
export function dnsNamesOf(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  const names: string[] = [];
  // Entries are `Type:value` separated by ", "; values with special characters are JSON strings.
  const entry = /(?:^|,\s*)([A-Za-z][A-Za-z ]*):("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (const m of subjectAltName.matchAll(entry)) {
    if (m[1] !== 'DNS') continue;
    let value = m[2]!.trim();
    if (value.startsWith('"')) {
      try {
        value = JSON.parse(value) as string;
      } catch {
        continue;
      }
    }
    if (value) names.push(value.toLowerCase());
  }
  return names;
}

/** The common name (CN) of a distinguished name as node:crypto prints it (one `K=V` a line). */
export function commonNameOf(distinguishedName: string): string | null {
  for (const line of distinguishedName.split('\n')) {
    const m = /^CN=(.*)$/.exec(line.trim());
    if (m && m[1]) return m[1];
  }
  return null;
}
