import type { CaddyHandler, ProxyRoute, ServerProxyInput } from './caddy-input.js';
import { isCaddyHandlerList } from './handlers.js';

/**
 * Handlers the operator declared that no route runs yet: the shared middlewares no enabled
 * domain names, and `standbyHandlers` (the platform site's handlers before it has a host).
 * Caddy provisions only what a config holds, so without this a broken handler would be
 * accepted now and refused, with every later change, the day a domain names it.
 */
export function standbyHandlers(input: ServerProxyInput, used: (route: ProxyRoute) => string[]): CaddyHandler[] {
  const named = new Set(input.routes.filter((r) => r.enabled).flatMap(used));
  const handlers: CaddyHandler[] = [];
  for (const [name, list] of Object.entries(input.middlewares)) {
    if (named.has(name)) continue;
    // A route naming a malformed middleware is refused by the route's renderer; here it only needs to be a list.
    if (isCaddyHandlerList(list)) for (const h of list) handlers.push(structuredClone(h));
  }
  for (const h of input.standbyHandlers ?? []) handlers.push(structuredClone(h));
  return handlers;
}

/** A route that never matches (CEL `false`): its handlers are provisioned, so checked, at every load, and never run. */
export function standbyRoute(handlers: CaddyHandler[]): Record<string, unknown> {
  return { match: [{ expression: 'false' }], handle: handlers };
}
