/**
 * The operator's global options (the proxy's `global.json`) over the rendered config: objects
 * merge key by key, arrays and scalars replace. The admin API stays Skiff's.
 */
import { CaddyConfigError } from './caddy-error.js';

type Json = Record<string, unknown>;

export function mergeGlobalOptions(config: Json, global: unknown): Json {
  if (!isObject(global)) throw new CaddyConfigError('the global options must be a JSON object');
  if (Object.hasOwn(global, 'admin')) throw new CaddyConfigError('the global options must not set admin (Skiff manages the admin API)');
  return merge(config, global) as Json;
}

function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return copy(over);
  const keys = [...Object.keys(base), ...Object.keys(over).filter((k) => !Object.hasOwn(base, k))];
  // fromEntries defines own properties, so a `__proto__` key stays a plain key.
  return Object.fromEntries(keys.map((k) => [k, Object.hasOwn(over, k) ? merge(base[k], over[k]) : copy(base[k])]));
}

const copy = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(copy) : isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])) : value;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
