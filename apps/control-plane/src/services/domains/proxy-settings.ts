import { type OutputOf, contracts } from '@skiff/contracts';
import type { Db } from '@skiff/db';
import { ProxyOperation } from '@skiff/proto';
import { z } from 'zod';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer, requirePlatformAdmin } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import { MIDDLEWARES_FILE, type ProxyRequests } from './proxy-requests.js';

/** The files behind the dedicated operations, in the proxy's configuration directory. */
const GLOBAL_FILE = 'global.json';
const PLATFORM_FILE = 'platform.json';

/** The largest file content the agents keep. */
export const MAX_PROXY_FILE_BYTES = 512 * 1024;

const Written = z.object({});
const FileText = z.string();
/** The agents' answers have the shapes of the operations' own answers. */
const { readDirectories, toggleDashboard, readProxyEnv } = contracts.settings;

/**
 * The `settings.*Proxy*` operations: each is one ProxyRequest to the agent of the server whose
 * proxy it addresses, which owns the proxy's configuration directory and checks every path and
 * every edit (docs in libs/contracts/src/settings/proxy.ts). Here: who may address which proxy.
 * A server must be one of the caller's organization (NOT_FOUND otherwise) that they may use; the
 * platform host's proxy serves every organization, so it needs a platform administrator.
 */
export class ProxySettingsService {
  constructor(
    private readonly db: Db,
    private readonly proxies: ProxyRequests,
  ) {}

  readProxyConfig(p: Principal) {
    return this.readFile(p, undefined, GLOBAL_FILE);
  }

  updateProxyConfig(p: Principal, input: { proxyConfig: string }) {
    return this.writeFile(p, undefined, GLOBAL_FILE, input.proxyConfig);
  }

  readWebServerProxyConfig(p: Principal) {
    return this.readFile(p, undefined, PLATFORM_FILE);
  }

  updateWebServerProxyConfig(p: Principal, input: { proxyConfig: string }) {
    return this.writeFile(p, undefined, PLATFORM_FILE, input.proxyConfig);
  }

  readMiddlewareProxyConfig(p: Principal) {
    return this.readFile(p, undefined, MIDDLEWARES_FILE);
  }

  updateMiddlewareProxyConfig(p: Principal, input: { proxyConfig: string }) {
    return this.writeFile(p, undefined, MIDDLEWARES_FILE, input.proxyConfig);
  }

  async readDirectories(p: Principal, input: { serverId?: string }): Promise<OutputOf<typeof readDirectories>> {
    const serverId = await this.target(p, input.serverId);
    return this.proxies.send(serverId, { operation: ProxyOperation.PROXY_OPERATION_LIST_FILES }, readDirectories.output);
  }

  readProxyFile(p: Principal, input: { path: string; serverId?: string }) {
    return this.readFile(p, input.serverId, input.path);
  }

  updateProxyFile(p: Principal, input: { path: string; proxyConfig: string; serverId?: string }) {
    return this.writeFile(p, input.serverId, input.path, input.proxyConfig);
  }

  async reloadProxy(p: Principal, input: { serverId?: string }) {
    const serverId = await this.target(p, input.serverId);
    await this.proxies.send(serverId, { operation: ProxyOperation.PROXY_OPERATION_RELOAD }, Written);
    return {};
  }

  async toggleDashboard(p: Principal, input: { enableDashboard?: boolean; serverId?: string }) {
    const serverId = await this.target(p, input.serverId);
    return this.proxies.send(
      serverId,
      { operation: ProxyOperation.PROXY_OPERATION_TOGGLE_DASHBOARD, enableDashboard: input.enableDashboard },
      toggleDashboard.output,
    );
  }

  async readProxyEnv(p: Principal, input: { serverId?: string }) {
    const serverId = await this.target(p, input.serverId);
    return this.proxies.send(serverId, { operation: ProxyOperation.PROXY_OPERATION_READ_ENV }, readProxyEnv.output);
  }

  private async readFile(p: Principal, serverId: string | undefined, path: string): Promise<string> {
    const target = await this.target(p, serverId);
    return this.proxies.send(target, { operation: ProxyOperation.PROXY_OPERATION_READ_FILE, path }, FileText);
  }

  private async writeFile(p: Principal, serverId: string | undefined, path: string, content: string) {
    const target = await this.target(p, serverId);
    if (Buffer.byteLength(content, 'utf8') > MAX_PROXY_FILE_BYTES) throw Invalid('proxyConfig', 'must be at most 512 KiB');
    await this.proxies.send(target, { operation: ProxyOperation.PROXY_OPERATION_WRITE_FILE, path, content }, Written);
    return {};
  }

  /** The server whose proxy the caller addresses (null: the platform host), once they may. */
  private async target(p: Principal, serverId: string | undefined): Promise<string | null> {
    if (!serverId) {
      requirePlatformAdmin(p, "The platform host's proxy serves every organization: only a platform administrator may use it");
      return null;
    }
    const server = await this.db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw NotFound('No such server');
    if (!canSeeServer(p, serverId)) throw Forbidden('No access to this server');
    return server.id;
  }
}
