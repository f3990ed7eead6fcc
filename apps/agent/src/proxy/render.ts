/**
 * The one way the agent renders its proxy's whole Caddy config: the last applied input (its
 * routes, certificates and platform domain), the configuration files (the shared middlewares,
 * the platform site's handlers, the global options merged over the result) and the agent's
 * own options (admin socket, container listeners, issuer, dashboard). Pure; throws the
 * renderer's CaddyConfigError.
 */
import { caddyConfig, mergeGlobalOptions, type CaddyConfig, type IssuerOption, type ProxyOptions } from '@skiff/domain';
import type { ProxySettings } from '../config.js';
import { DASHBOARD_CONTAINER_PORT } from './proxy-container.js';
import type { ProxyFiles } from './proxy-files.js';
import type { ProxyInput } from './proxy-input.js';

/** Caddy's listeners inside its container; the host ports are the published ones. */
const CONTAINER_HTTP_PORT = 80;
const CONTAINER_HTTPS_PORT = 443;

export type RenderSettings = Pick<ProxySettings, 'httpsPort' | 'issuer' | 'acmeEmail'>;

export interface RenderSources {
  input: ProxyInput;
  files: ProxyFiles;
  adminSocket: string;
  settings: RenderSettings;
  dashboard: boolean;
}

export function renderProxyConfig(sources: RenderSources): CaddyConfig {
  const { input, files } = sources;
  const platform = input.platform ? { ...input.platform, handlers: files.platform } : null;
  // Without a platform site its handlers still get checked at every load, never run.
  const standbyHandlers = input.platform ? [] : files.platform;
  const config = caddyConfig({ ...input, platform, middlewares: files.middlewares, standbyHandlers, options: agentOptions(sources) });
  return mergeGlobalOptions(config, files.global);
}

function agentOptions({ adminSocket, settings, dashboard }: RenderSources): ProxyOptions {
  const issuer: IssuerOption = settings.issuer === 'internal' ? { module: 'internal' } : { module: 'acme', email: settings.acmeEmail };
  return {
    adminSocket,
    httpPort: CONTAINER_HTTP_PORT,
    httpsPort: CONTAINER_HTTPS_PORT,
    // Redirects name the port clients reach, which is the published one.
    ...(settings.httpsPort !== CONTAINER_HTTPS_PORT ? { redirectHttpsPort: settings.httpsPort } : {}),
    issuer,
    acmeEmail: settings.acmeEmail,
    ...(dashboard ? { dashboard: { port: DASHBOARD_CONTAINER_PORT } } : {}),
  };
}
