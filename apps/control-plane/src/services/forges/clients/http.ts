/**
 * JSON requests to a forge's REST API through @skiff/outbound (addresses checked at connect
 * time, no redirects, a deadline, a size limit), and the pagination schemes forges use. Error
 * messages carry the forge's own short message with every credential of the request hidden.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { OutboundFetchError, outboundFetch, type OutboundPolicy, type Resolver } from '@skiff/outbound';
import { trimChar } from '@skiff/domain';

export interface ForgeHttpDeps {
  policy: OutboundPolicy;
  resolver?: Resolver;
  /** Per request. Default 15 s. */
  timeoutMs?: number;
}

/** What a forge call failed with; `status` is the forge's HTTP status (0: no answer). The message holds no credential. */
export class ForgeError extends Error {
  override name = 'ForgeError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface ForgeRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Credentials to hide from any message built from the answer. */
  secrets: readonly string[];
}

export interface ForgeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  data: unknown;
}

const MAX_BYTES = 8 * 1024 * 1024;
/** Pages read at most for one listing (100 items each: 10 000 repositories or branches). */
export const MAX_PAGES = 100;

export const hide = (text: string, secrets: readonly string[]) =>
  secrets.filter((s) => s.length >= 3).reduce((t, s) => t.split(s).join('***'), text);

/** `label` names the forge in messages ("forgeC (Bitbucket)"). */
export async function forgeJson(deps: ForgeHttpDeps, label: string, url: string, request: ForgeRequest): Promise<ForgeAnswer> {
  let answer;
  try {
    answer = await outboundFetch(url, {
      policy: deps.policy,
      resolver: deps.resolver,
      maxBytes: MAX_BYTES,
      timeoutMs: deps.timeoutMs ?? 15_000,
      method: request.method ?? 'GET',
      headers: { accept: 'application/json', 'user-agent': 'skiff', ...request.headers },
      body: request.body,
    });
  } catch (err) {
    if (err instanceof OutboundFetchError) throw new ForgeError(`${label} could not be reached: ${hide(err.message, request.secrets)}`, 0);
    throw err;
  }
  const text = answer.body.toString('utf8');
  let data: unknown = null;
  try {
    data = text === '' ? null : JSON.parse(text);
  } catch {
    if (answer.status < 300) throw new ForgeError(`${label} answered something that is not JSON (HTTP ${answer.status})`, answer.status);
  }
  if (answer.status >= 300) {
    const said = forgeMessage(data);
    const why = answer.status === 401 ? 'refused the credentials' : answer.status === 403 ? 'refused access' : answer.status === 404 ? 'found no such resource' : 'answered an error';
    throw new ForgeError(hide(`${label} ${why} (HTTP ${answer.status})${said ? `: ${said}` : ''}`, request.secrets), answer.status);
  }
  return { status: answer.status, headers: answer.headers, data };
}

/** The forge's own short explanation in an error body (GitHub/Gitea `message`, GitLab `message`/`error`, Bitbucket `error.message`). */
function forgeMessage(data: unknown): string | null {
  if (!data || typeof data !== 'object') return null;
  const d = data as Record<string, unknown>;
  const nested = d.error && typeof d.error === 'object' ? (d.error as Record<string, unknown>).message : undefined;
  const text = [d.message, nested, d.error_description, d.error].find((v) => typeof v === 'string');
  return typeof text === 'string' ? text.slice(0, 200) : null;
}

/** The `rel="next"` address of a Link header (GitHub, Gitea), or null. */
export function nextLink(header: string | string[] | undefined): string | null {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of text.split(',')) {
    const link = part.trim();
    const close = link.indexOf('>');
    if (!link.startsWith('<') || close < 2) continue;
    const params = link.slice(close + 1).trim();
    if (params.startsWith(';') && /\brel="?next"?/.test(params)) return link.slice(1, close);
  }
  return null;
}

/**
 * A next-page address a forge gave, if it stays on the API's origin: a forge (or something
 * posing as one) cannot send the platform's credentials elsewhere.
 */
export function sameOrigin(next: string, base: string, label: string): string {
  const url = URL.parse(next, base);
  if (!url || url.origin !== new URL(base).origin) throw new ForgeError(`${label} gave a next page on another address; refused`, 0);
  return url.href;
}

/** Every item of a listing that names its next page (Link header or body), page by page. */
export async function allPages<T>(
  first: string,
  fetchPage: (url: string) => Promise<{ items: T[]; next: string | null }>,
  base: string,
  label: string,
): Promise<T[]> {
  const all: T[] = [];
  let url: string | null = first;
  for (let page = 0; url !== null; page++) {
    if (page >= MAX_PAGES) throw new ForgeError(`${label} has more than ${MAX_PAGES} pages of results`, 0);
    const { items, next } = await fetchPage(url);
    all.push(...items);
    url = next === null ? null : sameOrigin(next, base, label);
  }
  return all;
}

/** `path` under the API base, with query parameters. */
export function apiUrl(base: string, path: string, query: Record<string, string | number | undefined> = {}): string {
  const url = new URL(`${trimChar(base, '/', 'end')}${path}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url.href;
}

export const seg = encodeURIComponent;

export const asArray = (data: unknown, label: string): Record<string, unknown>[] => {
  if (!Array.isArray(data)) throw new ForgeError(`${label} answered an unexpected shape (a list was expected)`, 0);
  return data as Record<string, unknown>[];
};
