import { type Command, CommandKind, timestampFromDate } from '@skiff/proto';
import { after, defineCommandKind, workloadKey } from './kind.js';

/** Long enough for a server that is offline for days to get its configuration when it returns. */
export const PROXY_DEADLINE_MS = 7 * 24 * 60 * 60_000;

/** The FIFO queue of a server's proxy on its agent. */
export const proxyWorkloadKey = (wireServerId: string) => workloadKey('proxy', wireServerId);

export interface ApplyProxyConfigInput {
  commandId: string;
  /** The server on the agent channel (wireServerId). */
  serverId: string;
  /** The server's whole proxy input (services/domains/proxy-config.ts ProxyInput), as JSON. */
  inputJson: string;
  /** The server's next revision: the agent applies no older configuration over a newer one. */
  revision: number;
  createdAt: Date;
}

/** The ApplyProxyConfig command of one server's configuration. */
export function applyProxyConfigCommand(input: ApplyProxyConfigInput): Command {
  return {
    commandId: input.commandId,
    serverId: input.serverId,
    kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG,
    workloadKey: proxyWorkloadKey(input.serverId),
    deadline: timestampFromDate(after(input.createdAt, PROXY_DEADLINE_MS)),
    createdAt: timestampFromDate(input.createdAt),
    payload: { $case: 'applyProxyConfig', value: { inputJson: input.inputJson, revision: String(input.revision) } },
  };
}

/**
 * ApplyProxyConfig: queued by every change of a server's routes (services/domains/proxy-config.ts).
 * Its result changes no record: a later change queues the whole configuration again.
 */
export const applyProxyConfig = defineCommandKind({
  name: 'apply proxy config',
  kinds: [CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG],
  workloads: ['proxy'],
  build: applyProxyConfigCommand,
  applyResult: async () => {},
});
