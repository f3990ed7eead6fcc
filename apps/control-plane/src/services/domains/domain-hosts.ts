import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Db } from '@skiff/db';
import { generatedHost, isPublicIPv4, nameSuffix, normalizeHost } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';

export interface DomainOptions {
  /** The platform host's public address (`SKIFF_PUBLIC_IP`), for generated and validated domains. */
  publicIp?: string;
  /** How long validateDomain waits for DNS answers. */
  dnsTimeoutMs?: number;
}

/**
 * Generated and validated domain names (`domain.generateDomain`, `canGenerateProxyMeDomains`,
 * `validateDomain`): the public address a server's domains point to, and what DNS answers.
 */
export class DomainHosts {
  private readonly dnsTimeoutMs: number;

  constructor(
    private readonly db: Db,
    private readonly options: DomainOptions = {},
  ) {
    this.dnsTimeoutMs = options.dnsTimeoutMs ?? 3000;
  }

  async generateDomain(p: Principal, input: { appName: string; serverId?: string }) {
    const { ip, reason } = await this.publicIpv4Of(p, input.serverId, 'serverId', false);
    if (!ip) throw Invalid('serverId', reason!);
    const host = generatedHost(input.appName, ip, nameSuffix());
    if (!host.ok) throw Invalid('appName', host.reason);
    return { host: host.value };
  }

  /**
   * Fresh hosts by generateDomain's rule for one service (templates' `${domain}`), or why
   * none can be made on its server.
   */
  async hostGenerator(p: Principal, appName: string, serverId: string | null): Promise<{ next: () => string } | { reason: string }> {
    const { ip, reason } = await this.publicIpv4Of(p, serverId ?? undefined, 'serverId', false);
    if (!ip) return { reason: reason! };
    return {
      next: () => {
        const host = generatedHost(appName, ip, nameSuffix());
        if (!host.ok) throw Invalid('appName', host.reason);
        return host.value;
      },
    };
  }

  async canGenerateProxyMeDomains(p: Principal, serverId: string) {
    const { ip, reason } = await this.publicIpv4Of(p, serverId, 'serverId', true);
    return { canGenerate: ip !== null, ipAddress: ip, reason };
  }

  async validateDomain(p: Principal, input: { domain: string; serverId?: string }) {
    const normalized = normalizeHost(input.domain);
    if (!normalized.ok) throw Invalid('domain', normalized.reason);
    const expected = await this.addressesOf(p, input.serverId);
    const host = normalized.value.startsWith('*.') ? `skiff-check-${nameSuffix()}.${normalized.value.slice(2)}` : normalized.value;
    const answer = await this.resolve(host);
    const resolvedIps = 'ips' in answer ? answer.ips : [];
    const serverIp = expected.ips[0] ?? null;
    const fail = (reason: string) => ({ valid: false, reason, resolvedIps, serverIp });
    if ('error' in answer) return fail(answer.error);
    if (expected.ips.length === 0) return fail(expected.reason!);
    if (!resolvedIps.some((ip) => expected.ips.includes(ip))) {
      return fail(`${normalized.value} resolves to ${resolvedIps.join(', ')}, not to ${expected.ips.join(', ')}`);
    }
    return { valid: true, reason: null, resolvedIps, serverIp };
  }

  /**
   * The public IPv4 address generated domains point to: the configured one for the platform
   * host (serverId absent or empty), the server's address otherwise. An unknown server is
   * NOT_FOUND for reads (`asRead`) and BAD_REQUEST naming the field otherwise.
   */
  private async publicIpv4Of(p: Principal, serverId: string | undefined, field: string, asRead: boolean): Promise<{ ip: string | null; reason: string | null }> {
    if (!serverId) {
      const ip = this.options.publicIp;
      if (!ip) return { ip: null, reason: 'the platform host has no public IPv4 address configured (SKIFF_PUBLIC_IP)' };
      if (!isPublicIPv4(ip)) return { ip: null, reason: `the platform host's address ${ip} is not a public IPv4 address` };
      return { ip, reason: null };
    }
    const server = await this.server(p, serverId, field, asRead);
    if (!isPublicIPv4(server.address)) return { ip: null, reason: `the server's address ${server.address} is not a public IPv4 address` };
    return { ip: server.address, reason: null };
  }

  /** The addresses a domain served by this server (absent: the platform host) should resolve to. */
  private async addressesOf(p: Principal, serverId: string | undefined): Promise<{ ips: string[]; reason: string | null }> {
    if (!serverId) {
      const ip = this.options.publicIp;
      return ip ? { ips: [ip], reason: null } : { ips: [], reason: 'the platform host has no public IP address configured (SKIFF_PUBLIC_IP)' };
    }
    const { address } = await this.server(p, serverId, 'serverId', false);
    if (isIP(address)) return { ips: [address], reason: null };
    const answer = await this.resolve(address);
    return 'ips' in answer ? { ips: answer.ips, reason: null } : { ips: [], reason: `the server's address ${address}: ${answer.error}` };
  }

  private async server(p: Principal, serverId: string, field: string, asRead: boolean) {
    const server = await this.db.selectFrom('servers').select(['id', 'organizationId', 'address']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw asRead ? NotFound('No such server') : Invalid(field, 'no such server');
    if (!canSeeServer(p, serverId)) throw Forbidden('No access to this server');
    return server;
  }

  /** DNS answers as the platform host sees them (hosts file included), within the timeout. */
  private async resolve(host: string): Promise<{ ips: string[] } | { error: string }> {
    if (isIP(host)) return { ips: [host] };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), this.dnsTimeoutMs);
    });
    try {
      const answers = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
      const ips = [...new Set(answers.map((a) => a.address))];
      return ips.length ? { ips } : { error: `${host} has no address records` };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') return { error: `${host} does not resolve (no DNS records)` };
      if (code === 'ETIMEOUT') return { error: `no DNS answer for ${host} within ${this.dnsTimeoutMs} ms` };
      return { error: `DNS lookup of ${host} failed (${code ?? 'error'})` };
    } finally {
      clearTimeout(timer);
    }
  }
}
