/**
 * Names both sides of the agent channel agree on (ARCHITECTURE.md "Commands"): the
 * JetStream stream that carries commands, each server's subject and durable consumer.
 */

/** The server id of the platform's own host, whose services have `serverId: null`. */
export const LOCAL_SERVER_ID = 'local';

/** The JetStream stream holding every server's commands (subjects `agent.*.cmd`). */
export const COMMAND_STREAM = 'SKIFF_COMMANDS';
export const COMMAND_SUBJECTS = 'agent.*.cmd';

/** `agent.<serverId>.cmd`: where a server's commands are published. */
export const commandSubject = (serverId: string) => `agent.${serverId}.cmd`;

/** The durable consumer through which a server's agent receives its commands. */
export const commandConsumer = (serverId: string) => `agent-${serverId}`;

/** A services's server id on the wire: its record's `serverId`, or the platform host's. */
export const wireServerId = (serverId: string | null) => serverId ?? LOCAL_SERVER_ID;

/** `agent.<serverId>.ctl`: where the control plane sends a server's control requests (NATS request/reply, not queued). */
export const controlSubject = (serverId: string) => `agent.${serverId}.ctl`;
