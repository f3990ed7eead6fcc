/**
 * The few Engine API reads an idle agent makes (its engine's version at start, the Skiff
 * services it adopts, the crash-loop watcher's services and tasks, the metrics sampler's
 * container list and stats streams), sent straight over the unix socket with node:http so that dockerode
 * (with its BuildKit session, gRPC and protobuf definitions, ~9 MB resident) is loaded only
 * when a command needs it (lazy-driver.ts). Its errors look like dockerode's (`statusCode`,
 * `json`), so toDockerError reads both alike.
 */
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

// Not `import … from 'node:http'`: the agent's one-file ESM bundle hoists every such import to
// its top, and the ESM namespace of node:http reads its lazy getters, loading undici (~4 MB)
// into every idle agent (lazy-load.spec.ts).
const { request } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export interface EngineSocketOptions {
  socketPath: string;
  /** Longest silence on one request, as dockerode's `timeout`. */
  timeoutMs: number;
}

export class EngineSocket {
  constructor(private readonly options: EngineSocketOptions) {}

  /** GET /version. */
  version(): Promise<{ Version?: string }> {
    return this.get('/version') as Promise<{ Version?: string }>;
  }

  /** GET /services, with dockerode's `listServices` options (filters sent as JSON, as docker-modem does). */
  listServices(options: { filters?: Record<string, string[]> } = {}): Promise<unknown> {
    return this.get(`/services${filtersQuery(options.filters)}`);
  }

  /** GET /services/<name or id>. */
  inspectService(name: string): Promise<unknown> {
    return this.get(`/services/${encodeURIComponent(name)}`);
  }

  /** GET /tasks, with dockerode's `listTasks` options. */
  listTasks(options: { filters?: Record<string, string[]> } = {}): Promise<unknown> {
    return this.get(`/tasks${filtersQuery(options.filters)}`);
  }

  /** GET /containers/json, with dockerode's `listContainers` options (`all`: stopped ones too). */
  listContainers(options: { all?: boolean; filters?: Record<string, string[]> } = {}): Promise<unknown> {
    const query = filtersQuery(options.filters);
    return this.get(`/containers/json${query}${options.all ? `${query ? '&' : '?'}all=true` : ''}`);
  }

  /**
   * A streaming GET (`/containers/<id>/stats?stream=true`): the response once the engine
   * accepted it, its body still coming; a refusal fails as `get` does.
   */
  stream(path: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.request(path, reject, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(res);
        else answerOf(res, path).catch(reject);
      });
      req.end();
    });
  }

  private request(path: string, reject: (err: Error) => void, onResponse: (res: IncomingMessage) => void) {
    const req = request({ socketPath: this.options.socketPath, path, method: 'GET', headers: { accept: 'application/json' } }, onResponse);
    req.setTimeout(this.options.timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${this.options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    return req;
  }

  private get(path: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.request(path, reject, (res) => answerOf(res, path).then(resolve, reject)).end();
    });
  }
}

const filtersQuery = (filters: Record<string, string[]> | undefined) => (filters ? `?filters=${encodeURIComponent(JSON.stringify(filters))}` : '');

/** A whole response: its JSON (or text) when 2xx, else an error carrying the status and body as dockerode's do. */
function answerOf(res: IncomingMessage, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // Not JSON: kept as text, the engine's message.
      }
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) resolve(body);
      else reject(Object.assign(new Error(`(HTTP code ${status}) ${path}`), { statusCode: status, json: body }));
    });
  });
}
