// One client per forge kind, built from a connection's settings and opened credentials.
import type { ForgeKind } from '@skiff/db';
import { bitbucketClient } from './bitbucket.js';
import { gitHubClient } from './github.js';
import { type GitLabTokens, gitLabClient } from './gitlab.js';
import { giteaClient } from './gitea.js';
import type { ForgeHttpDeps } from './http.js';
import type { ForgeClient } from './types.js';

export { ForgeError, type ForgeHttpDeps } from './http.js';
export type { CloneLogin, ForgeBranch, ForgeClient, ForgeRepository } from './types.js';
export type { GitLabTokens } from './gitlab.js';

export interface ForgeConnection {
  kind: ForgeKind;
  /** Plain settings, defaults applied. */
  config: Record<string, unknown>;
  /** Opened credentials. */
  secrets: Record<string, unknown>;
}

export interface ForgeClientDeps extends ForgeHttpDeps {
  clock: () => Date;
  /** Stores a GitLab connection's refreshed OAuth tokens (sealed). */
  saveTokens: (tokens: GitLabTokens) => Promise<void>;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function forgeClient(c: ForgeConnection, deps: ForgeClientDeps): ForgeClient {
  const { config, secrets } = c;
  switch (c.kind) {
    case 'forgeA':
      return gitHubClient(
        {
          apiUrl: text(config.apiUrl) ?? 'https://api.github.com',
          appId: typeof config.appId === 'number' ? config.appId : null,
          installationId: text(config.installationId),
          privateKey: text(secrets.privateKey),
          accessToken: text(secrets.accessToken),
        },
        deps,
      );
    case 'forgeB': {
      const publicUrl = text(config.forgeBUrl) ?? '';
      const accessToken = text(secrets.accessToken);
      return gitLabClient(
        {
          instanceUrl: text(config.forgeBInternalUrl) ?? publicUrl,
          publicUrl,
          groupName: text(config.groupName),
          applicationId: text(config.applicationId),
          secret: text(secrets.secret),
          redirectUri: text(config.redirectUri),
          tokens: accessToken ? { accessToken, refreshToken: text(secrets.refreshToken), expiresAt: text(secrets.tokenExpiresAt) } : null,
        },
        deps,
      );
    }
    case 'forgeC':
      return bitbucketClient(
        {
          apiUrl: text(config.apiUrl) ?? 'https://api.bitbucket.org/2.0',
          username: text(config.forgeCUsername),
          email: text(config.forgeCEmail),
          workspace: text(config.forgeCWorkspaceName),
          appPassword: text(secrets.appPassword),
          apiToken: text(secrets.apiToken),
        },
        deps,
      );
    case 'forgeD': {
      const publicUrl = text(config.forgeDUrl) ?? '';
      return giteaClient(
        { instanceUrl: text(config.forgeDInternalUrl) ?? publicUrl, publicUrl, organizationName: text(config.organizationName), accessToken: text(secrets.accessToken) },
        deps,
      );
    }
  }
}
