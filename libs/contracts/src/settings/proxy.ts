import { z } from 'zod';

/**
 * What the `settings.*Proxy*` operations share: the proxy's configuration directory, its
 * three files, the server they address and the shapes of their answers.
 */

/** Said once in every description: where the files are and who may touch the platform host's. */
export const PROXY_FILES_NOTE =
  "Each server's reverse proxy (Caddy) has a configuration directory kept by the server's agent, " +
  'holding three JSON files: `global.json` (global options), `platform.json` (handlers of the ' +
  "platform's own site) and `middlewares.json` (shared middlewares). Every edit is checked by " +
  'rendering the whole proxy configuration with it and loading it into the running proxy: what ' +
  'the renderer or Caddy refuses is a BAD_REQUEST naming `proxyConfig` with the reason, and the ' +
  'file keeps its old content. The proxy of the platform host serves every organization: using ' +
  'it needs a platform administrator (the user created at first boot), FORBIDDEN otherwise. ' +
  "An agent that does not answer is a BAD_REQUEST saying so; nothing was changed.";

export const GLOBAL_FILE_NOTE =
  '`global.json` holds the global options: a JSON object deep-merged into the Caddy ' +
  'configuration Skiff renders (objects merge key by key; arrays and scalars replace). Default ' +
  '`{}`. A top-level `admin` key is refused: Skiff manages Caddy\'s admin API. Example: ' +
  '`{"logging":{"logs":{"default":{"level":"WARN"}}}}`.';

export const PLATFORM_FILE_NOTE =
  '`platform.json` holds a JSON array of Caddy HTTP handlers run, in order, before the platform ' +
  "site's reverse proxy to the control plane, e.g. " +
  '`[{"handler":"headers","response":{"set":{"X-Frame-Options":["DENY"]}}}]`. Default `[]`. ' +
  'The site itself (its host, TLS and upstream) comes from settings.assignDomainServer; the ' +
  'handlers apply once a host is assigned.';

export const MIDDLEWARES_FILE_NOTE =
  '`middlewares.json` holds the shared middlewares: a JSON object mapping a name to an array of ' +
  'Caddy HTTP handlers, e.g. `{"no-frames":[{"handler":"headers","response":{"set":' +
  '{"X-Frame-Options":["DENY"]}}}]}`. Default `{}`. Domains name them in `middlewares` ' +
  '(`forwardAuthEnabled` uses the one named `forward-auth`); the handlers run before the ' +
  "route's rewrites. Removing a middleware that an enabled domain names is refused.";

export const ProxyServerId = z
  .string()
  .optional()
  .describe(
    "the server whose proxy is addressed (a server of the caller's organization, NOT_FOUND " +
      'otherwise); absent: the platform host',
  );

export const ProxyFileText = z.string().describe('the whole text of the file');

export interface ProxyFileNode {
  name: string;
  path: string;
  type: 'file' | 'directory';
  children?: ProxyFileNode[];
}

const ProxyFileNodeSchema: z.ZodType<ProxyFileNode> = z.object({
  name: z.string().describe('the file or directory name'),
  path: z.string().describe('its absolute path on the server, as settings.readProxyFile and updateProxyFile take it'),
  type: z.enum(['file', 'directory']),
  get children() {
    return z.array(ProxyFileNodeSchema).optional().describe("a directory's entries");
  },
}).register(z.globalRegistry, { id: 'ProxyFileNode' }); // recursive: one named OpenAPI component

export const ProxyFileTree = z
  .array(ProxyFileNodeSchema)
  .describe("the entries of the proxy's configuration directory, directories with their own entries");

export const ProxyDashboardState = z.object({
  enabled: z.boolean().describe('the dashboard (Caddy metrics) is served'),
  port: z.number().int().describe('the host port it is published on (0: not published)'),
});

export const ProxyEnvironment = z
  .record(z.string(), z.string())
  .describe("the proxy container's environment variables, name to value");
