/**
 * The server's proxy input (libs/domain's ServerProxyInput without its options: routes,
 * certificates, platform domain) as ApplyProxyConfig carries it, and the last applied one,
 * kept in `<agent data>/proxy/input.json` (0600, replaced atomically) so a change of the
 * configuration files or of the dashboard renders the whole config again. It holds secrets
 * (certificate keys, bcrypt hashes): reasons never quote it.
 */
import type { ServerProxyInput } from '@skiff/domain';
import { readConfigFile, writeConfigFile } from './last-good.js';
import { isObject, parseJson } from './proxy-files.js';

export type ProxyInput = Omit<ServerProxyInput, 'options'>;

export const INPUT_FILE = 'input.json';

/** Before the first ApplyProxyConfig: no routes, nothing else. */
export const EMPTY_INPUT: ProxyInput = { routes: [], certificates: [], platform: null, middlewares: {} };

/** The input in `json`, or why it is not one. Its `options` and `middlewares` are not taken (the agent's own are). */
export function parseProxyInput(json: string): { value: ProxyInput } | { reason: string } {
  const parsed = parseJson(json);
  if ('reason' in parsed) return { reason: `input_json ${parsed.reason}` };
  return checkProxyInput(parsed.value, 'input_json');
}

function checkProxyInput(value: unknown, label: string): { value: ProxyInput } | { reason: string } {
  if (!isObject(value)) return { reason: `${label} must be a JSON object` };
  if (!Array.isArray(value.routes) || !value.routes.every(isObject)) return { reason: `${label}.routes must be an array of objects` };
  if (!Array.isArray(value.certificates) || !value.certificates.every(isObject)) return { reason: `${label}.certificates must be an array of objects` };
  const platform = value.platform ?? null;
  if (platform !== null && !isObject(platform)) return { reason: `${label}.platform must be an object or null` };
  const middlewares = value.middlewares ?? {};
  if (!isObject(middlewares)) return { reason: `${label}.middlewares must be an object` };
  return { value: { routes: value.routes, certificates: value.certificates, platform, middlewares: {} } as unknown as ProxyInput };
}

/** The last applied input; null when none was kept. A file that is not one is an error (not an empty input). */
export function readSavedInput(path: string): ProxyInput | null {
  const saved = readConfigFile(path);
  if (saved === null) return null;
  const checked = checkProxyInput(saved, INPUT_FILE);
  if ('reason' in checked) throw new Error(`the last applied proxy input is unreadable: ${checked.reason}`);
  return checked.value;
}

export function saveInput(path: string, input: ProxyInput): void {
  writeConfigFile(path, input as unknown as Record<string, unknown>);
}
