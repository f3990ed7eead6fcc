/**
 * The two calls Skiff makes to an OpenAI-compatible API (OpenAI, and servers that copy its
 * wire format such as Ollama's or vLLM's `/v1`): `GET {apiUrl}/models` and
 * `POST {apiUrl}/chat/completions` with a JSON-schema structured output. Every request goes
 * through @skiff/outbound (addresses checked at connect time, no redirects, one deadline,
 * a size limit). The API key travels only in the Authorization header: no message built
 * here contains it, and text quoted from the provider has it blanked.
 */
import { type OutboundPolicy, OutboundFetchError, outboundFetch, type Resolver } from '@skiff/outbound';
import { trimChar } from '@skiff/domain';

/** What went wrong, for the caller: `about` says which setting is to blame. */
export class AiProviderError extends Error {
  override name = 'AiProviderError';
  constructor(
    message: string,
    readonly about: 'apiKey' | 'apiUrl' | 'model' | 'answer',
  ) {
    super(message);
  }
}

export interface AiEndpoint {
  apiUrl: string;
  /** Empty: the endpoint needs none (a local server), no Authorization header is sent. */
  apiKey: string;
}

export type AiModel = {
  id: string;
  ownedBy: string | null;
  created: number | null;
};

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

export interface OpenAiClientOptions {
  policy: OutboundPolicy;
  modelsTimeoutMs: number;
  /** Models write slowly: a chat answer gets much longer than a listing. */
  chatTimeoutMs: number;
  maxBytes: number;
  resolver?: Resolver;
}

export const DEFAULT_AI_LIMITS = { modelsTimeoutMs: 15_000, chatTimeoutMs: 120_000, maxBytes: 4 * 1024 * 1024 };

/** Longest piece of a provider's error message quoted back. */
const QUOTED_CHARS = 300;

export class OpenAiClient {
  constructor(private readonly options: OpenAiClientOptions) {}

  async models(endpoint: AiEndpoint): Promise<AiModel[]> {
    const body = await this.request(endpoint, 'models', { method: 'GET', timeoutMs: this.options.modelsTimeoutMs });
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data)) throw new AiProviderError('the models answer has no "data" list', 'answer');
    const models: AiModel[] = [];
    for (const entry of data) {
      if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id === '') continue;
      models.push({
        id: entry.id,
        ownedBy: typeof entry.owned_by === 'string' ? entry.owned_by : null,
        created: typeof entry.created === 'number' ? entry.created : null,
      });
    }
    return models.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The model's answer, held to `schema` by the provider (strict structured output), parsed as JSON. */
  async chatJson(endpoint: AiEndpoint, request: { model: string; messages: ChatMessage[]; schemaName: string; schema: Record<string, unknown> }): Promise<unknown> {
    const payload = {
      model: request.model,
      messages: request.messages,
      response_format: { type: 'json_schema', json_schema: { name: request.schemaName, strict: true, schema: request.schema } },
    };
    const body = await this.request(endpoint, 'chat/completions', { method: 'POST', timeoutMs: this.options.chatTimeoutMs, json: payload });
    const choice = (body as { choices?: unknown }).choices;
    const first = Array.isArray(choice) && isRecord(choice[0]) ? choice[0] : null;
    const message = first && isRecord(first.message) ? first.message : null;
    if (!message) throw new AiProviderError('the chat answer has no choices[0].message', 'answer');
    if (typeof message.refusal === 'string' && message.refusal !== '') {
      throw new AiProviderError(`the model refused: ${quoted(message.refusal, endpoint.apiKey)}`, 'answer');
    }
    if (first?.finish_reason === 'length') throw new AiProviderError('the model stopped before its answer was complete (token limit)', 'answer');
    if (typeof message.content !== 'string') throw new AiProviderError('the chat answer has no text in choices[0].message.content', 'answer');
    try {
      return JSON.parse(message.content);
    } catch {
      throw new AiProviderError('the model did not answer JSON (does it support structured output with response_format json_schema?)', 'answer');
    }
  }

  private async request(endpoint: AiEndpoint, path: string, how: { method: 'GET' | 'POST'; timeoutMs: number; json?: unknown }): Promise<unknown> {
    const url = `${trimChar(endpoint.apiUrl.trim(), '/', 'end')}/${path}`;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'skiff' };
    if (endpoint.apiKey !== '') headers.authorization = `Bearer ${endpoint.apiKey}`;
    if (how.json !== undefined) headers['content-type'] = 'application/json';
    let answer;
    try {
      answer = await outboundFetch(url, {
        policy: this.options.policy,
        resolver: this.options.resolver,
        maxBytes: this.options.maxBytes,
        timeoutMs: how.timeoutMs,
        method: how.method,
        headers,
        body: how.json === undefined ? undefined : JSON.stringify(how.json),
      });
    } catch (error) {
      if (error instanceof OutboundFetchError) throw new AiProviderError(`${how.method} /${path} failed: ${blanked(error.message, endpoint.apiKey)}`, 'apiUrl');
      throw error;
    }
    const text = answer.body.toString('utf8');
    if (answer.status === 401 || answer.status === 403) {
      throw new AiProviderError(`the AI provider refused the API key (HTTP ${answer.status} on /${path})`, 'apiKey');
    }
    if (answer.status === 404) {
      throw new AiProviderError(
        `the AI provider has no /${path} (HTTP 404${providerMessage(text, endpoint.apiKey)}): apiUrl must be the API's base, such as https://api.openai.com/v1`,
        /model/i.test(text) && path !== 'models' ? 'model' : 'apiUrl',
      );
    }
    if (answer.status < 200 || answer.status >= 300) {
      throw new AiProviderError(`the AI provider answered HTTP ${answer.status} on /${path}${providerMessage(text, endpoint.apiKey)}`, answer.status === 400 ? 'model' : 'apiUrl');
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isRecord(parsed)) throw new Error('not an object');
      return parsed;
    } catch {
      throw new AiProviderError(`the AI provider's answer to /${path} is not a JSON object`, 'answer');
    }
  }
}

/** `: <the provider's error.message>` when its answer carries one (OpenAI's error shape). */
function providerMessage(text: string, apiKey: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const error = isRecord(parsed) ? parsed.error : undefined;
    const message = isRecord(error) ? error.message : typeof error === 'string' ? error : undefined;
    return typeof message === 'string' && message.trim() !== '' ? `: ${quoted(message, apiKey)}` : '';
  } catch {
    return '';
  }
}

function quoted(text: string, apiKey: string): string {
  const short = blanked(text, apiKey).replace(/\s+/g, ' ').trim();
  return short.length > QUOTED_CHARS ? `${short.slice(0, QUOTED_CHARS)}…` : short;
}

/** The key (and any long piece of it a provider echoes back) replaced by `***`. */
function blanked(text: string, apiKey: string): string {
  if (apiKey.length < 8) return apiKey === '' ? text : text.split(apiKey).join('***');
  let out = text.split(apiKey).join('***');
  for (const piece of [apiKey.slice(0, 8), apiKey.slice(-8)]) out = out.split(piece).join('***');
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
