/**
 * Names both sides of the agent channel agree on (ARCHITECTURE.md "Commands"): the
 * JetStream stream that carries commands, each server's subject and durable consumer.
 */

/** The server id of the platform's own host, whose services have `serverId: null`. */
export const LOCAL_SERVER_ID = 'local';

/** The JetStream stream holding every server's commands (subjects `agent.*.cmd`). */
export const COMMAND_STREAM = 'SKIFF_COMMANDS';
export const COMMAND_SUBJECTS = 'agent.*.cmd';

/**
 * How the command stream keeps messages (both sides create it the same way): as a work
 * queue, so a command is removed once its agent acknowledged it (commands carry sealed
 * secrets; the agent's journal has it from then on); a command no agent took within
 * `maxAgeMs` is dropped (long past its deadline); no message over `maxMessageBytes`
 * (NATS's default max_payload); a re-publish within `duplicateWindowMs` is dropped.
 */
export const COMMAND_STREAM_LIMITS = {
  maxAgeMs: 7 * 24 * 3600_000,
  maxMessageBytes: 1024 * 1024,
  duplicateWindowMs: 2 * 60_000,
} as const;

/** `agent.<serverId>.cmd`: where a server's commands are published. */
export const commandSubject = (serverId: string) => `agent.${serverId}.cmd`;

/** The durable consumer through which a server's agent receives its commands. */
export const commandConsumer = (serverId: string) => `agent-${serverId}`;

/** A services's server id on the wire: its record's `serverId`, or the platform host's. */
export const wireServerId = (serverId: string | null) => serverId ?? LOCAL_SERVER_ID;

/** `agent.<serverId>.ctl`: where the control plane sends a server's control requests (NATS request/reply, not queued). */
export const controlSubject = (serverId: string) => `agent.${serverId}.ctl`;

/**
 * `agent.<serverId>.logs.<streamId>`: where an agent sends the chunks of a log stream the
 * control plane asked for (proto LogsRequest), each as a NATS request the control plane answers.
 */
export const logStreamSubject = (serverId: string, streamId: string) => `agent.${serverId}.logs.${streamId}`;

/** The prefix of an agent's reply inboxes; its NATS user may only subscribe below its own. */
export const agentInboxPrefix = (serverId: string) => `_INBOX_${serverId}`;

export interface NatsPermissions {
  pub: { allow: string[] };
  sub: { allow: string[] };
  /** Lets the agent answer the control requests it receives (once each) without a publish grant. */
  resp: { max: number; ttl: number };
}

/**
 * What one server's agent may do on NATS: read and acknowledge its own commands through its
 * own durable consumer (created with its own filter subject only), receive its control
 * requests and answer them. Nothing of another server, and no publishing of commands.
 */
export function agentNatsPermissions(serverId: string): NatsPermissions {
  const consumer = commandConsumer(serverId);
  const api = '$JS.API.CONSUMER';
  return {
    pub: {
      allow: [
        '$JS.API.INFO',
        `${api}.INFO.${COMMAND_STREAM}.${consumer}`,
        `${api}.CREATE.${COMMAND_STREAM}.${consumer}.${commandSubject(serverId)}`,
        `${api}.DELETE.${COMMAND_STREAM}.${consumer}`,
        `${api}.MSG.NEXT.${COMMAND_STREAM}.${consumer}`,
        `$JS.ACK.${COMMAND_STREAM}.${consumer}.>`,
        logStreamSubject(serverId, '*'),
      ],
    },
    sub: { allow: [`${agentInboxPrefix(serverId)}.>`, controlSubject(serverId)] },
    resp: { max: 1, ttl: 0 },
  };
}

/**
 * What the report server answers (gRPC PERMISSION_DENIED) to the credential of a server that
 * was removed: its agent stops, where an unknown credential is only refused. With it, what
 * the agent does with what runs on the machine (`server.remove`'s `workloads`): `none` (no
 * workload was recorded on it) removes its proxy container; `remove` removes every service
 * and container Skiff labelled, proxy included (volumes stay); `leaveRunning` touches nothing.
 */
export const SERVER_REMOVED_REASON = 'this server was removed from the control plane';

export type RemovedServerWorkloads = 'none' | 'remove' | 'leaveRunning';

const REMOVED_DETAILS: Record<RemovedServerWorkloads, string> = {
  none: SERVER_REMOVED_REASON,
  remove: `${SERVER_REMOVED_REASON} with its workloads`,
  leaveRunning: `${SERVER_REMOVED_REASON}; its workloads are left running`,
};

/** The gRPC status details telling an agent its server was removed, and what to do with its workloads. */
export const serverRemovedDetails = (workloads: RemovedServerWorkloads) => REMOVED_DETAILS[workloads];

/** What `serverRemovedDetails` said, or null when the details are not a removal's. */
export function removedServerWorkloads(details: string | undefined): RemovedServerWorkloads | null {
  for (const [workloads, text] of Object.entries(REMOVED_DETAILS)) if (text === details) return workloads as RemovedServerWorkloads;
  return null;
}

/**
 * The reasons cancelled work ends with (they become the deployments' and commands' reasons),
 * the same words whether the control plane ends a command that never reached its agent or
 * the agent ends it (proto CancelWorkload, CleanQueue).
 */
export const CANCEL_REASON = 'cancelled by the user';
export const KILL_BUILD_REASON = 'the build was killed by the user';
export const REMOVED_REASON = 'removed from the queue by the user';
