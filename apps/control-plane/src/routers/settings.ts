import type { RouterHandlers } from '../http/context.js';

export interface PlatformInfo {
  version: string;
  openApiDocument: () => Record<string, unknown>;
}

export const settingsHandlers = (platform: PlatformInfo): RouterHandlers<'settings'> => ({
  getOpenApiDocument: async () => platform.openApiDocument(),
  getPlatformVersion: async () => ({ version: platform.version }),
  getReleaseTag: async () => ({ tag: `v${platform.version}` }),
});
