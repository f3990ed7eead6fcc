import { CaddyConfigError, type ProxyRoute, type ServerProxyInput, caddyConfig } from '@skiff/domain';
import { DomainError, Invalid } from '../../errors.js';
import { MIDDLEWARES_FILE } from './proxy-requests.js';

/** A server's proxy input, checked before its command is queued for what the agent's renderer would refuse (check). */

/** What ApplyProxyConfig.input_json carries: a server's whole proxy input; the agent adds the options. */
export type ProxyInput = Omit<ServerProxyInput, 'options'>;

/** The shared middleware a route with `forwardAuthEnabled` runs first (the renderer's name for it). */
const FORWARD_AUTH = 'forward-auth';

/**
 * The names the shared middlewares of some servers declare (by wire id), read from their agents
 * before a change's transaction; an agent that could not tell keeps the reason instead.
 */
export type SharedMiddlewares = Map<string, Set<string> | DomainError>;

/**
 * Which input field a renderer refusal is about, from the reason after the route's label
 * (caddy-config.ts words them so). The first match wins.
 */
const FIELD_OF_REASON: [RegExp, string][] = [
  [/^(?:unknown )?middleware/, 'middlewares'],
  [/^basic-auth/, 'username'],
  [/^internalPath /, 'internalPath'],
  [/^path /, 'path'],
  [/^port /, 'port'],
  [/^upstream /, 'serviceName'],
  [/^(?:customCertResolver|unknown certificate resolver)/, 'customCertResolver'],
  [/^(?:unknown entrypoint|entrypoint )/, 'customEntrypoint'],
  [/^(?:certificate|no certificate|a wildcard host needs)|gets its certificate differently/, 'certificateType'],
];

/**
 * Renders the input as the agent will, to refuse what it would refuse. Resolver and entrypoint
 * names belong to the agent's options, which the control plane does not hold yet: the check
 * declares every name the routes use, and leaves judging them to the agent. So it does with
 * middleware names unless `shared` has the names the server's agent declares (asked for the
 * servers where a change names middlewares): then a name the agent lacks, or an agent that
 * could not tell, is refused.
 */
export function check(input: ProxyInput, field: string | undefined, shared: Set<string> | DomainError | undefined): void {
  for (const r of input.routes) {
    if (r.enabled && r.certificateType === 'custom' && !r.certificateId) {
      throw Invalid(field ?? 'certificateType', `domain ${r.domainId} (${r.host}): no stored certificate covers ${r.host} on this server`);
    }
  }
  const used = new Set(input.routes.flatMap(middlewaresOf));
  let declared = used;
  if (shared instanceof DomainError) {
    if (used.size > 0) {
      throw Invalid('middlewares', `the shared middlewares (${MIDDLEWARES_FILE}) of this server could not be read to check the names: ${shared.message}`);
    }
  } else if (shared) {
    for (const r of input.routes) {
      const unknown = middlewaresOf(r).find((name) => !shared.has(name));
      if (unknown === undefined) continue;
      const known = shared.size ? [...shared].sort().join(', ') : 'none';
      throw Invalid(
        'middlewares',
        `domain ${r.domainId} (${r.host}): unknown middleware ${JSON.stringify(unknown)}: the shared middlewares (${MIDDLEWARES_FILE}) of this server declare ${known}`,
      );
    }
    declared = shared;
  }
  const resolvers = new Set(input.routes.flatMap((r) => (r.customCertResolver ? [r.customCertResolver] : [])));
  const entrypoints = [...new Set(input.routes.flatMap((r) => (r.customEntrypoint ? [r.customEntrypoint] : [])))].sort();
  try {
    caddyConfig({
      ...input,
      middlewares: Object.fromEntries([...declared].map((name) => [name, []])),
      options: {
        adminSocket: '/run/caddy/admin.sock',
        certResolvers: Object.fromEntries([...resolvers].map((name) => [name, { module: 'internal' as const }])),
        entrypoints: Object.fromEntries(entrypoints.map((name, i) => [name, 20_000 + i])),
      },
    });
  } catch (err) {
    if (!(err instanceof CaddyConfigError)) throw err;
    throw Invalid(field ?? fieldOf(err.message), err.message);
  }
}

function fieldOf(message: string): string {
  const reason = message.replace(/^(?:domain [^ ]+ \([^)]*\)|platform domain \([^)]*\)): /, '');
  return FIELD_OF_REASON.find(([pattern]) => pattern.test(reason))?.[1] ?? 'host';
}

/** The shared middlewares an enabled route uses. */
function middlewaresOf(r: ProxyRoute): string[] {
  if (!r.enabled) return [];
  return [...(r.forwardAuthEnabled ? [FORWARD_AUTH] : []), ...(r.middlewares ?? [])];
}
