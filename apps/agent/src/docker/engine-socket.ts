/**
 * The few Engine API reads an idle agent makes (its engine's version at start, the Skiff
 * services it adopts), sent straight over the unix socket with node:http so that dockerode
 * (with its BuildKit session, gRPC and protobuf definitions, ~9 MB resident) is loaded only
 * when a command needs it (lazy-driver.ts). Its errors look like dockerode's (`statusCode`,
 * `json`), so toDockerError reads both alike.
 */
import { request } from 'node:http';

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
    const query = options.filters ? `?filters=${encodeURIComponent(JSON.stringify(options.filters))}` : '';
    return this.get(`/services${query}`);
  }

  private get(path: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: this.options.socketPath, path, method: 'GET', headers: { accept: 'application/json' } }, (res) => {
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
      req.setTimeout(this.options.timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${this.options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end();
    });
  }
}
