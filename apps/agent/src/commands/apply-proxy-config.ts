/**
 * ApplyProxyConfig: renders the server's whole Caddy config from the command's input and the
 * agent's own proxy options, and loads it into `skiff-proxy` (started on the first one).
 *
 * - Only the newest matters: a revision not above the last applied one (kept beside
 *   last-good.json) succeeds without doing anything.
 * - An input the renderer refuses, or a config Caddy refuses, fails the command with the
 *   reason; the running config stays.
 * - Idempotent: loading the same config again changes nothing.
 *
 * The input holds certificate keys and bcrypt hashes: neither it nor the rendered config is
 * ever logged, and reasons never quote it.
 */
import {
  CaddyConfigError,
  caddyConfig,
  type IssuerOption,
  type ProxyOptions,
  type ServerProxyInput,
} from '@skiff/domain';
import { CommandKind, type Command } from '@skiff/proto';
import type { ProxySettings } from '../config.js';
import { appliedRevisionPath, readAppliedRevision, writeAppliedRevision } from '../proxy/applied-revision.js';
import { ProxyUnavailableError, type ProxyManager } from '../proxy/proxy-manager.js';
import { AbandonedError, type CommandHandler, type CommandOutcome } from './handler.js';
import { failed, succeeded } from './workload-services.js';

/** Caddy's listeners inside its container; the host ports are the published ones. */
const CONTAINER_HTTP_PORT = 80;
const CONTAINER_HTTPS_PORT = 443;

export interface ApplyProxyConfigDeps {
  serverId: string;
  proxy: Pick<ProxyManager, 'adminSocket' | 'lastGoodPath' | 'apply' | 'start'>;
  settings: Pick<ProxySettings, 'httpsPort' | 'issuer' | 'acmeEmail'>;
  /** Longest load (bringing the proxy up included) when the command's deadline allows more. Default 60 s. */
  timeoutMs?: number;
  now?: () => Date;
}

type ProxyInput = Omit<ServerProxyInput, 'options'>;

export function applyProxyConfigHandler(deps: ApplyProxyConfigDeps): CommandHandler {
  const now = deps.now ?? (() => new Date());
  const revisionFile = () => appliedRevisionPath(deps.proxy.lastGoodPath);
  return {
    kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG,
    payloadCase: 'applyProxyConfig',
    takesSlot: false,
    validate: (command) => {
      const expectedKey = `proxy:${deps.serverId}`;
      if (command.workloadKey !== expectedKey) return `the workload key of a proxy config must be ${expectedKey}`;
      const payload = payloadOf(command);
      if (!payload) return 'apply_proxy_config is missing';
      if (!/^\d+$/.test(payload.revision)) return 'revision must be a whole number';
      const input = parseInput(payload.inputJson);
      return 'reason' in input ? input.reason : null;
    },
    run: async (context): Promise<CommandOutcome> => {
      const { signal, log } = context;
      if (signal.aborted) throw new AbandonedError();
      const payload = payloadOf(context.command)!;
      const revision = BigInt(payload.revision);
      const applied = readAppliedRevision(revisionFile());
      if (applied !== null && revision <= applied) {
        log.info({ revision: payload.revision, applied: applied.toString() }, 'proxy config superseded: a newer revision is applied already');
        return succeeded();
      }

      const input = parseInput(payload.inputJson);
      if ('reason' in input) return failed(input.reason);
      let config;
      try {
        config = caddyConfig({ ...input.value, options: agentOptions(deps) });
      } catch (err) {
        if (err instanceof CaddyConfigError) return failed(err.message);
        // The renderer trusts the field types; a wrong one surfaces as a TypeError.
        if (err instanceof TypeError) return failed(`input_json is not a proxy input: ${err.message}`);
        throw err;
      }

      const timeoutMs = Math.min(deps.timeoutMs ?? 60_000, (context.deadline?.getTime() ?? Infinity) - now().getTime());
      if (timeoutMs <= 0) return failed('the deadline passed before the config could be loaded');
      // The first config brings the proxy up; from then on it is watched (and a no-op here).
      void deps.proxy.start();
      let result;
      try {
        result = await untilAborted(deps.proxy.apply(config, { timeoutMs }), signal);
      } catch (err) {
        if (err instanceof ProxyUnavailableError) return failed(`the proxy could not be reached: ${err.message}`);
        throw err;
      }
      if (!result.ok) return failed(`Caddy refused the config (HTTP ${result.status}): ${result.reason}`);
      writeAppliedRevision(revisionFile(), revision);
      log.info({ revision: payload.revision, routes: input.value.routes.length }, 'proxy config applied');
      return succeeded();
    },
  };
}

function payloadOf(command: Command) {
  return command.payload?.$case === 'applyProxyConfig' ? command.payload.value : null;
}

function agentOptions(deps: ApplyProxyConfigDeps): ProxyOptions {
  const { settings } = deps;
  const issuer: IssuerOption = settings.issuer === 'internal' ? { module: 'internal' } : { module: 'acme', email: settings.acmeEmail };
  return {
    adminSocket: deps.proxy.adminSocket,
    httpPort: CONTAINER_HTTP_PORT,
    httpsPort: CONTAINER_HTTPS_PORT,
    // Redirects name the port clients reach, which is the published one.
    ...(settings.httpsPort !== CONTAINER_HTTPS_PORT ? { redirectHttpsPort: settings.httpsPort } : {}),
    issuer,
    acmeEmail: settings.acmeEmail,
  };
}

/** The input without options, or why it is not one. Reasons never quote the text (it holds secrets). */
function parseInput(json: string): { value: ProxyInput } | { reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    // JSON.parse's message may quote the text: only the position is kept.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    return { reason: `input_json is not valid JSON${position ? ` (at position ${position})` : ''}` };
  }
  if (!isObject(value)) return { reason: 'input_json must be a JSON object' };
  if (!Array.isArray(value.routes) || !value.routes.every(isObject)) return { reason: 'input_json.routes must be an array of objects' };
  if (!Array.isArray(value.certificates) || !value.certificates.every(isObject)) return { reason: 'input_json.certificates must be an array of objects' };
  const platform = value.platform ?? null;
  if (platform !== null && !isObject(platform)) return { reason: 'input_json.platform must be an object or null' };
  const middlewares = value.middlewares ?? {};
  if (!isObject(middlewares)) return { reason: 'input_json.middlewares must be an object' };
  // Any `options` in it are not taken: the agent's own are.
  return { value: { routes: value.routes, certificates: value.certificates, platform, middlewares } as unknown as ProxyInput };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The promise's outcome, or AbandonedError as soon as the signal aborts (the load itself runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbandonedError());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
