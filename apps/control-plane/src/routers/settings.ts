import type { RouterHandlers } from '../http/context.js';
import type { PlatformSettingsService } from '../services/platform-settings.js';

export interface PlatformInfo {
  version: string;
  openApiDocument: () => Record<string, unknown>;
}

export const settingsHandlers = (platform: PlatformInfo, settings: PlatformSettingsService): RouterHandlers<'settings'> => ({
  getOpenApiDocument: async () => platform.openApiDocument(),
  getPlatformVersion: async () => ({ version: platform.version }),
  getReleaseTag: async () => ({ tag: `v${platform.version}` }),
  get: (_input, { principal }) => settings.get(principal),
  getIp: (_input, { principal }) => settings.getIp(principal),
  assignDomainServer: (input, { principal }) => settings.assignDomainServer(principal, input),
  updateContainerCleanup: (input, { principal }) => settings.updateContainerCleanup(principal, input),
  saveSSHPrivateKey: (input, { principal }) => settings.saveSSHPrivateKey(principal, input),
  cleanSSHPrivateKey: (_input, { principal }) => settings.cleanSSHPrivateKey(principal),
});
