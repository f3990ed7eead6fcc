import type { RouterHandlers } from '../http/context.js';
import type { PlatformSettingsService } from '../services/settings/index.js';
import type { ProxySettingsService } from '../services/domains/index.js';

export interface PlatformInfo {
  version: string;
  openApiDocument: () => Record<string, unknown>;
}

export const settingsHandlers = (
  platform: PlatformInfo,
  settings: PlatformSettingsService,
  proxy: ProxySettingsService,
): RouterHandlers<'settings'> => ({
  getOpenApiDocument: async () => platform.openApiDocument(),
  getPlatformVersion: async () => ({ version: platform.version }),
  getReleaseTag: async () => ({ tag: `v${platform.version}` }),
  get: (_input, { principal }) => settings.get(principal),
  getIp: (_input, { principal }) => settings.getIp(principal),
  assignDomainServer: (input, { principal }) => settings.assignDomainServer(principal, input),
  saveSSHPrivateKey: (input, { principal }) => settings.saveSSHPrivateKey(principal, input),
  cleanSSHPrivateKey: (_input, { principal }) => settings.cleanSSHPrivateKey(principal),
  trustOrganization: (input, { principal }) => settings.trustOrganization(principal, input),
  readProxyConfig: (_input, { principal }) => proxy.readProxyConfig(principal),
  updateProxyConfig: (input, { principal }) => proxy.updateProxyConfig(principal, input),
  readWebServerProxyConfig: (_input, { principal }) => proxy.readWebServerProxyConfig(principal),
  updateWebServerProxyConfig: (input, { principal }) => proxy.updateWebServerProxyConfig(principal, input),
  readMiddlewareProxyConfig: (_input, { principal }) => proxy.readMiddlewareProxyConfig(principal),
  updateMiddlewareProxyConfig: (input, { principal }) => proxy.updateMiddlewareProxyConfig(principal, input),
  readDirectories: (input, { principal }) => proxy.readDirectories(principal, input),
  readProxyFile: (input, { principal }) => proxy.readProxyFile(principal, input),
  updateProxyFile: (input, { principal }) => proxy.updateProxyFile(principal, input),
  reloadProxy: (input, { principal }) => proxy.reloadProxy(principal, input),
  toggleDashboard: (input, { principal }) => proxy.toggleDashboard(principal, input),
  readProxyEnv: (input, { principal }) => proxy.readProxyEnv(principal, input),
});
