/**
 * Answers a ProxyRequest (proto ControlRequest.proxy): the settings.*Proxy* operations on this
 * server's proxy, carried out at once. Files and loads go through the ProxyConfigLoader (one
 * change at a time, see there); a refusal names the request field it is about
 * (ProxyReply.refused_field) with the reason in ControlReply.error. Neither replies nor logs
 * quote a file's content or the proxy input.
 */
import { ProxyOperation, type ControlReply, type ProxyRequest } from '@skiff/proto';
import type { Logger } from 'pino';
import type { DockerDriver } from '../docker/driver.js';
import { ProxyBusyError, ProxyConfigRefusedError, type ProxyConfigLoader } from '../proxy/config-loader.js';
import { ProxyUnavailableError } from '../proxy/proxy-manager.js';
import { ProxyRequestRefused } from '../proxy/refusal.js';

export interface ProxyControlDeps {
  loader: ProxyConfigLoader;
  driver: Pick<DockerDriver, 'containerByName'>;
  containerName: string;
  log: Logger;
  /**
   * Longest wait for a write, switch or reload (the lock, bringing the proxy up, the load).
   * Default 25 s: the control plane waits 30 s for the reply of a proxy request.
   */
  timeoutMs?: number;
}

export class ProxyControl {
  private readonly log: Logger;

  constructor(private readonly deps: ProxyControlDeps) {
    this.log = deps.log.child({ component: 'proxy-control' });
  }

  async handle(request: ProxyRequest): Promise<ControlReply> {
    const timeoutMs = this.deps.timeoutMs ?? 25_000;
    const { loader } = this.deps;
    try {
      switch (request.operation) {
        case ProxyOperation.PROXY_OPERATION_LIST_FILES:
          loader.files.ensure();
          return answer(loader.files.list());
        case ProxyOperation.PROXY_OPERATION_READ_FILE:
          loader.files.ensure();
          return answer(loader.files.read(request.path));
        case ProxyOperation.PROXY_OPERATION_WRITE_FILE:
          await loader.writeFile(request.path, request.content, timeoutMs);
          return answer({});
        case ProxyOperation.PROXY_OPERATION_RELOAD:
          await loader.reload(timeoutMs);
          return answer({});
        case ProxyOperation.PROXY_OPERATION_TOGGLE_DASHBOARD:
          return answer(await loader.toggleDashboard(request.enableDashboard, timeoutMs));
        case ProxyOperation.PROXY_OPERATION_READ_ENV:
          return await this.readEnv();
        default:
          return refusal('the proxy request names no operation this agent knows');
      }
    } catch (err) {
      if (err instanceof ProxyRequestRefused) {
        this.log.info({ operation: ProxyOperation[request.operation], field: err.field, reason: err.message }, 'proxy request refused');
        return refusal(err.message, err.field);
      }
      if (err instanceof ProxyConfigRefusedError || err instanceof ProxyBusyError) return refusal(err.message);
      if (err instanceof ProxyUnavailableError) return refusal(`the proxy could not be reached: ${err.message}`);
      this.log.error({ err, operation: ProxyOperation[request.operation] }, 'proxy request failed');
      return refusal(`the agent could not carry out the proxy request: ${(err as Error).message}`);
    }
  }

  private async readEnv(): Promise<ControlReply> {
    const container = await this.deps.driver.containerByName(this.deps.containerName);
    if (!container) return refusal(`the proxy container ${this.deps.containerName} does not exist on this server`);
    const pairs = container.env.map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
    });
    return answer(Object.fromEntries(pairs));
  }
}

function answer(result: unknown): ControlReply {
  return { commandIds: [], error: '', proxy: { resultJson: JSON.stringify(result), refusedField: '' } };
}

function refusal(error: string, field = ''): ControlReply {
  return { commandIds: [], error, proxy: { resultJson: '', refusedField: field } };
}
