/**
 * Pinning git to the addresses the outbound policy checked, for a clone of a URL that
 * `refuseGitUrl` (@skiff/domain) already accepted:
 *
 * - http(s): `-c http.curloptResolve=<host>:<port>:<addresses>` (git ≥ 2.37), so curl
 *   connects to the checked addresses while TLS and Host still use the name; a literal
 *   address needs no pin. The URL given to git is the parsed one (numeric spellings such as
 *   `2130706433` written as the address that was judged).
 * - git://: the URL given to git carries the checked address instead of the name (the git
 *   protocol has no TLS to verify a name).
 * - ssh (URLs and scp-like `user@host:path`): an ssh_config text, written by the caller and
 *   given to ssh with `-F`, mapping the host as git passes it to the checked address
 *   (`HostName`), with host keys still pinned under the name (`HostKeyAlias`). It holds only
 *   an IP literal and a host made of `[a-z0-9._-]`, so nothing else reaches ssh's parser.
 * - Always `-c http.followRedirects=false`: git follows no redirect (submodules included:
 *   `-c` options reach the git processes it starts).
 *
 * The transports themselves are limited by @skiff/domain gitEnv (GIT_ALLOW_PROTOCOL: no
 * `file://`, no `ext::`, which overrides any `protocol.*.allow` configuration).
 */
import { isIP, isIPv6 } from 'node:net';
import { scpLikeHost } from '@skiff/domain';
import type { OutboundPolicy } from './address-policy.js';
import { OutboundRefused, type Resolver, resolvePinned } from './resolve.js';

export interface GitPin {
  /** git options, before the subcommand (`git <configArgs> clone …`). */
  configArgs: string[];
  /** The URL to give git. */
  url: string;
  /** The ssh_config text pinning an ssh host, or null (not ssh, or an address literal). */
  sshConfig: string | null;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ssh:': 22, 'git:': 9418 };
const SSH_HOST = /^[a-z0-9._-]+$/;
const NO_REDIRECTS = ['-c', 'http.followRedirects=false'];

const bracketed = (address: string) => (isIPv6(address) ? `[${address}]` : address);

/** Resolves and checks the repository's host under `policy` and answers how to make git use only what was checked. */
export async function pinGitRemote(url: string, policy: OutboundPolicy, resolver?: Resolver): Promise<GitPin> {
  const scpHost = scpLikeHost(url);
  if (scpHost !== null) {
    const pinned = await resolvePinned(scpHost, 22, policy, resolver);
    return { configArgs: NO_REDIRECTS, url, sshConfig: sshPin(scpHost, pinned.addresses[0]!) };
  }
  const parsed = new URL(url);
  const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol];
  if (port === undefined) throw new OutboundRefused(`the ${parsed.protocol} transport is not allowed`);
  const pinned = await resolvePinned(parsed.hostname, port, policy, resolver);
  const literal = isIP(pinned.host) !== 0;
  switch (parsed.protocol) {
    case 'http:':
    case 'https:': {
      const resolve = literal ? [] : ['-c', `http.curloptResolve=${pinned.host}:${port}:${pinned.addresses.map(bracketed).join(',')}`];
      return { configArgs: [...resolve, ...NO_REDIRECTS], url: parsed.href, sshConfig: null };
    }
    case 'git:': {
      const address = bracketed(pinned.addresses[0]!);
      return { configArgs: NO_REDIRECTS, url: `git://${address}:${port}${parsed.pathname}${parsed.search}`, sshConfig: null };
    }
    default:
      return { configArgs: NO_REDIRECTS, url, sshConfig: literal ? null : sshPin(parsed.hostname, pinned.addresses[0]!) };
  }
}

/** `Host <as git names it>` → `HostName <checked address>`; host keys stay under the name. */
function sshPin(hostAsNamed: string, address: string): string {
  const host = hostAsNamed.toLowerCase();
  if (!SSH_HOST.test(host)) throw new OutboundRefused(`the ssh host ${JSON.stringify(hostAsNamed)} has characters ssh cannot be given safely`);
  if (isIP(address) === 0) throw new OutboundRefused(`${address} is not an IP address`);
  return `Host ${host}\n  HostName ${address}\n  HostKeyAlias ${host}\n`;
}
