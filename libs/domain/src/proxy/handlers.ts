import type { CaddyHandler } from './caddy-input.js';

/** A JSON object naming its Caddy handler module (`{"handler": "headers", ...}`). */
export function isCaddyHandler(value: unknown): value is CaddyHandler {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { handler?: unknown }).handler === 'string' &&
    (value as { handler: string }).handler !== ''
  );
}

export function isCaddyHandlerList(value: unknown): value is CaddyHandler[] {
  return Array.isArray(value) && value.every(isCaddyHandler);
}
