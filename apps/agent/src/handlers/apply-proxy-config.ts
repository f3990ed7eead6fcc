/**
 * ApplyProxyConfig: renders the server's whole Caddy config from the command's input, the
 * proxy's configuration files and the agent's own proxy options, and loads it into
 * `skiff-proxy` (started on the first one), through the ProxyConfigLoader (one change at a
 * time). Accepted, the input is kept as the last applied one.
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
import { CommandKind, type Command } from '@skiff/proto';
import { readAppliedRevision, writeAppliedRevision } from '../proxy/applied-revision.js';
import { ProxyBusyError, type ProxyConfigLoader } from '../proxy/config-loader.js';
import { parseProxyInput } from '../proxy/proxy-input.js';
import { ProxyUnavailableError } from '../proxy/proxy-manager.js';
import { AbandonedError } from '../abort/abandoned.js';
import { failed, succeeded, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';

export interface ApplyProxyConfigDeps {
  serverId: string;
  loader: Pick<ProxyConfigLoader, 'applyInput' | 'revisionPath' | 'hasSavedInput'>;
  /** Longest load (bringing the proxy up included) when the command's deadline allows more. Default 60 s. */
  timeoutMs?: number;
  now?: () => Date;
}

export function applyProxyConfigHandler(deps: ApplyProxyConfigDeps): CommandHandler {
  const now = deps.now ?? (() => new Date());
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
      const input = parseProxyInput(payload.inputJson);
      return 'reason' in input ? input.reason : null;
    },
    run: async (context): Promise<CommandOutcome> => {
      const { signal, log } = context;
      if (signal.aborted) throw new AbandonedError();
      const payload = payloadOf(context.command)!;
      const revision = BigInt(payload.revision);
      const applied = readAppliedRevision(deps.loader.revisionPath);
      // The same revision again is applied when its input was not kept (an agent before input.json applied it).
      if (applied !== null && (revision < applied || (revision === applied && deps.loader.hasSavedInput()))) {
        log.info({ revision: payload.revision, applied: applied.toString() }, 'proxy config superseded: a newer revision is applied already');
        return succeeded();
      }

      const input = parseProxyInput(payload.inputJson);
      if ('reason' in input) return failed(input.reason);
      const timeoutMs = Math.min(deps.timeoutMs ?? 60_000, (context.deadline?.getTime() ?? Infinity) - now().getTime());
      if (timeoutMs <= 0) return failed('the deadline passed before the config could be loaded');
      let result;
      try {
        result = await untilAborted(deps.loader.applyInput(input.value, timeoutMs), signal);
      } catch (err) {
        if (err instanceof ProxyUnavailableError) return failed(`the proxy could not be reached: ${err.message}`);
        if (err instanceof ProxyBusyError) return failed(err.message);
        throw err;
      }
      if (!result.ok) return failed(result.reason);
      writeAppliedRevision(deps.loader.revisionPath, revision);
      log.info({ revision: payload.revision, routes: input.value.routes.length }, 'proxy config applied');
      return succeeded();
    },
  };
}

function payloadOf(command: Command) {
  return command.payload?.$case === 'applyProxyConfig' ? command.payload.value : null;
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
