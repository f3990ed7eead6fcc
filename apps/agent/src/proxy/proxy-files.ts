/**
 * The three files of the proxy's configuration directory and what each must hold (pure):
 * - `global.json`: a JSON object merged over the rendered Caddy config, without `admin`;
 * - `platform.json`: an array of Caddy handlers run before the platform site's reverse_proxy;
 * - `middlewares.json`: an object naming arrays of Caddy handlers (the shared middlewares).
 * A Caddy handler is an object with a non-empty string `handler`. Reasons never quote the
 * content (it may hold secrets, e.g. a basic-auth hash in a middleware).
 */
import { isCaddyHandler, type CaddyHandler } from '@skiff/domain';

export const GLOBAL_FILE = 'global.json';
export const PLATFORM_FILE = 'platform.json';
export const MIDDLEWARES_FILE = 'middlewares.json';
export const PROXY_FILE_NAMES = [GLOBAL_FILE, PLATFORM_FILE, MIDDLEWARES_FILE] as const;
export type ProxyFileName = (typeof PROXY_FILE_NAMES)[number];

/** Largest file content, in bytes. */
/** Below NATS's default 1 MiB message limit, with room for the request around it. */
export const MAX_FILE_BYTES = 512 << 10;

export const DEFAULT_CONTENT: Readonly<Record<ProxyFileName, string>> = {
  [GLOBAL_FILE]: '{}\n',
  [PLATFORM_FILE]: '[]\n',
  [MIDDLEWARES_FILE]: '{}\n',
};

export interface ProxyFiles {
  global: Record<string, unknown>;
  platform: CaddyHandler[];
  middlewares: Record<string, CaddyHandler[]>;
}

/** A file on disk that does not hold what its name asks for. */
export class ProxyFileError extends Error {
  override readonly name = 'ProxyFileError';
}

export function isProxyFileName(name: string): name is ProxyFileName {
  return (PROXY_FILE_NAMES as readonly string[]).includes(name);
}

type Parsed<T> = { value: T } | { reason: string };

/** The file's value, or why the text is not one (`<name> …`). */
export function parseProxyFile(name: 'global.json', text: string): Parsed<ProxyFiles['global']>;
export function parseProxyFile(name: 'platform.json', text: string): Parsed<ProxyFiles['platform']>;
export function parseProxyFile(name: 'middlewares.json', text: string): Parsed<ProxyFiles['middlewares']>;
export function parseProxyFile(name: ProxyFileName, text: string): Parsed<unknown>;
export function parseProxyFile(name: ProxyFileName, text: string): Parsed<unknown> {
  if (Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES) return { reason: `${name} is larger than 512 KiB` };
  const json = parseJson(text);
  if ('reason' in json) return { reason: `${name} ${json.reason}` };
  const reason = shapeProblem(name, json.value);
  return reason === null ? json : { reason };
}

function shapeProblem(name: ProxyFileName, value: unknown): string | null {
  switch (name) {
    case GLOBAL_FILE:
      if (!isObject(value)) return `${name} must be a JSON object`;
      return Object.hasOwn(value, 'admin') ? `${name} must not set admin (Skiff manages the admin API)` : null;
    case PLATFORM_FILE:
      if (!Array.isArray(value)) return `${name} must be a JSON array of Caddy handlers`;
      return handlerProblem(value, `${name}: item`);
    case MIDDLEWARES_FILE:
      if (!isObject(value)) return `${name} must be a JSON object naming lists of Caddy handlers`;
      for (const [middleware, list] of Object.entries(value)) {
        const label = `${name}: middleware ${JSON.stringify(middleware)}`;
        if (!Array.isArray(list)) return `${label} must be a list of Caddy handlers`;
        const problem = handlerProblem(list, `${label}, handler`);
        if (problem) return problem;
      }
      return null;
  }
}

function handlerProblem(list: unknown[], label: string): string | null {
  const bad = list.findIndex((h) => !isCaddyHandler(h));
  return bad < 0 ? null : `${label} ${bad + 1} must be a Caddy handler (an object with a "handler" name)`;
}

/** JSON.parse without its message, which may quote the text: only the position is kept. */
export function parseJson(text: string): { value: unknown } | { reason: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    return { reason: `is not valid JSON${position ? ` (at position ${position})` : ''}` };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
