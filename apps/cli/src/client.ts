import type { Contract } from '@skiff/contracts';
import { type Issue, refused, unreachable } from './errors.js';
import type { Context } from './config.js';

export interface ServerError {
  code: string;
  message: string;
  issues?: Array<{ path: (string | number)[]; message: string }>;
  requestId?: string;
}

export type Client = ReturnType<typeof createClient>;

/** Query parameters of a GET operation: one per field, repeated for lists. */
export function queryOf(input: Record<string, unknown>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) q.append(k, typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
  }
  return q;
}

/** `text` with every occurrence of the key replaced: an HTTP client's or a proxy's message may quote it. */
export function withoutKey(text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join('***') : text;
}

export function createClient(context: Context, fetchImpl: typeof fetch = fetch) {
  const headers = { 'x-api-key': context.apiKey };
  const hide = (text: string) => withoutKey(text, context.apiKey);

  async function request(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetchImpl(`${context.url}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw unreachable(hide(`cannot reach ${context.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`));
    }
  }

  async function refusal(res: Response): Promise<never> {
    const text = await res.text().catch(() => '');
    let body: ServerError | null = null;
    try {
      body = JSON.parse(text) as ServerError;
    } catch {
      // not Skiff's error envelope (a proxy's page, say)
    }
    // Hidden in the whole text before cutting it, so no piece of the key is left at the cut.
    if (!body?.code) throw refused(`HTTP ${res.status} from ${context.url}${text ? `: ${hide(text).slice(0, 200)}` : ''}`);
    const issues: Issue[] = (body.issues ?? []).map((i) => ({ path: i.path.join('.') || '(input)', message: hide(i.message) }));
    throw refused(hide(`${body.code}: ${body.message}${body.requestId ? ` (request ${body.requestId})` : ''}`), issues);
  }

  return {
    url: context.url,
    /** Calls an operation with an input already checked against its contract. */
    async call<T = unknown>(contract: Pick<Contract, 'name' | 'method'>, input: Record<string, unknown>): Promise<T> {
      const res =
        contract.method === 'GET'
          ? await request(`/api/${contract.name}${[...queryOf(input)].length ? `?${queryOf(input)}` : ''}`, { method: 'GET' })
          : await request(`/api/${contract.name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) });
      if (!res.ok) return refusal(res);
      const text = await res.text();
      return (text ? JSON.parse(text) : null) as T;
    },
    /** Calls an operation that takes a file: its fields and the file as `multipart/form-data` (http/uploads.ts reads it). */
    async upload<T = unknown>(contract: Pick<Contract, 'name'>, body: FormData): Promise<T> {
      const res = await request(`/api/${contract.name}`, { method: 'POST', body });
      if (!res.ok) return refusal(res);
      const text = await res.text();
      return (text ? JSON.parse(text) : null) as T;
    },
    /** Server-sent events of a stream route (`/api/logs.deployment`, `/api/events`…), until it ends. */
    async *stream(path: string, query: Record<string, unknown>, signal?: AbortSignal): AsyncGenerator<{ event: string; data: string }> {
      const q = queryOf(query);
      const res = await request(`${path}${[...q].length ? `?${q}` : ''}`, { method: 'GET', headers: { accept: 'text/event-stream' }, signal });
      if (!res.ok) await refusal(res);
      if (!res.body) return;
      yield* sseEvents(res.body);
    },
  };
}

/** Parses a server-sent event stream (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length) yield { event, data: data.join('\n') };
        event = 'message';
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
    }
  }
}
