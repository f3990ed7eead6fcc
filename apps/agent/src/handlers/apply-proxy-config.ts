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
 * - A load the proxy could not take (Caddy not answering, the engine not starting its
 *   container, another change holding the lock) is tried again, waiting longer each time, until
 *   the command's deadline: nothing else would bring the routes back, and a proxy left on its
 *   boot config serves nothing.
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
import { AbandonedError, pause } from '../abort/abandoned.js';
import { DockerError, withoutEngineIds } from '../docker/errors.js';
import { failed, succeeded, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';

export interface ApplyProxyConfigDeps {
  serverId: string;
  loader: Pick<ProxyConfigLoader, 'applyInput' | 'revisionPath' | 'hasSavedInput'>;
  /** Longest load (bringing the proxy up included) when the command's deadline allows more. Default 60 s. */
  timeoutMs?: number;
  /** The waits between loads the proxy could not take; the last one repeats. */
  retryDelaysMs?: readonly number[];
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
      const delays = deps.retryDelaysMs ?? RETRY_DELAYS_MS;
      let lastProblem: string | null = null;
      let result;
      for (let attempt = 0; result === undefined; attempt++) {
        const timeoutMs = Math.min(deps.timeoutMs ?? 60_000, (context.deadline?.getTime() ?? Infinity) - now().getTime());
        if (timeoutMs <= 0) {
          return failed(lastProblem ?? 'the deadline passed before the config could be loaded');
        }
        try {
          result = await untilAborted(deps.loader.applyInput(input.value, timeoutMs), signal);
        } catch (err) {
          const problem = untakenLoad(err);
          if (problem === null) throw err;
          // Once per distinct problem, not at every try.
          if (lastProblem === null || withoutEngineIds(problem) !== withoutEngineIds(lastProblem)) {
            log.warn({ revision: payload.revision, reason: problem }, 'the proxy could not take the config; trying again');
          }
          lastProblem = problem;
          await pause(delays[Math.min(attempt, delays.length - 1)]!, signal);
        }
      }
      if (!result.ok) return failed(result.reason);
      writeAppliedRevision(deps.loader.revisionPath, revision);
      log.info({ revision: payload.revision, routes: input.value.routes.length }, 'proxy config applied');
      return succeeded();
    },
  };
}

const RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000];

/** Why the proxy could not take a load it may take later, or null for any other error. */
function untakenLoad(err: unknown): string | null {
  if (err instanceof ProxyUnavailableError) return `the proxy could not be reached: ${err.message}`;
  if (err instanceof ProxyBusyError) return err.message;
  if (err instanceof DockerError) return `the proxy could not be brought up: ${err.message}`;
  return null;
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
