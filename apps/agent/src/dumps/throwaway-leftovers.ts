/**
 * Throw-away containers (verifications' scratch databases, volume archive containers, libSQL relays) left by
 * a command that will not run again: the agent stopped during the run and the command's
 * deadline passed before it came back, so no rerun removes them. Found by Skiff's own label
 * whose value is the container's own name (`skiff-…`, given by the agent per command): a
 * user's container, even one whose image carries the label, has another name and is never
 * taken for one. Each also carries OWNER_LABEL, the server id of the agent that made it: several
 * agents may share one engine (test machines, a server joined twice), and one never removes
 * another's, whose commands are not in its journal. Listed over the engine's socket
 * (engine-socket.ts), so that looking at an agent's start loads no Docker client; one is
 * loaded only when there is something to remove.
 */

/** The container name of a command's throw-away container: one per command, so a rerun finds what a run left. */
export const throwawayName = (prefix: string, commandId: string) => `${prefix}-${commandId.replace(/[^a-zA-Z0-9_.-]/g, '-')}`;

/** The label of a verification's containers (scratch-databases.ts), its value the container's name. */
export const SCRATCH_LABEL = 'skiff.verify';
/** A verification's container name; its tools probe: `<name>-tools`. */
export const scratchName = (commandId: string) => throwawayName('skiff-verify', commandId);

/** The label of a volume backup's or restore's container (volume-containers.ts), its value the container's name. */
export const VOLUME_TOOL_LABEL = 'skiff.volume-tool';
export const volumeToolName = (commandId: string) => throwawayName('skiff-volume', commandId);

/** The label of a libSQL command's relay container (database-containers.ts), its value the container's name. */
export const RELAY_LABEL = 'skiff.relay';
export const relayName = (commandId: string) => throwawayName('skiff-relay', commandId);

/** The label naming the agent (its server id) whose command made a throw-away container. */
export const OWNER_LABEL = 'skiff.agent';

export interface ThrowawayKind {
  /** The label Skiff puts on these containers, its value the container's name. */
  label: string;
  /** The names a command's throw-away containers take. */
  namesOf: (commandId: string) => string[];
}

export const SCRATCH_CONTAINERS: ThrowawayKind = { label: SCRATCH_LABEL, namesOf: (id) => [scratchName(id), `${scratchName(id)}-tools`] };
export const VOLUME_TOOL_CONTAINERS: ThrowawayKind = { label: VOLUME_TOOL_LABEL, namesOf: (id) => [volumeToolName(id)] };
export const RELAY_CONTAINERS: ThrowawayKind = { label: RELAY_LABEL, namesOf: (id) => [relayName(id)] };

/** GET /containers/json (EngineSocket, or dockerode). */
export interface ContainerLister {
  listContainers(options: { all?: boolean; filters?: Record<string, string[]> }): Promise<unknown>;
}

/**
 * Removes (`remove`) the containers of `kind` that agent `owner` made and none of its live
 * commands owns, and answers their names. `liveCommands` is read after the listing: a
 * command that makes its container meanwhile was journaled before, so it is counted.
 */
export async function removeLeftovers(
  engine: ContainerLister,
  kind: ThrowawayKind,
  owner: string,
  liveCommands: () => Iterable<string>,
  remove: (id: string) => Promise<void>,
): Promise<string[]> {
  const found = (await engine.listContainers({ all: true, filters: { label: [kind.label, `${OWNER_LABEL}=${owner}`] } })) as Array<{ Id: string; Names?: string[]; Labels?: Record<string, string> }>;
  const live = new Set([...liveCommands()].flatMap(kind.namesOf));
  const removed: string[] = [];
  for (const c of found) {
    const name = (c.Names?.[0] ?? '').replace(/^\//, '');
    if (!name.startsWith('skiff-') || c.Labels?.[kind.label] !== name || c.Labels?.[OWNER_LABEL] !== owner || live.has(name)) continue;
    await remove(c.Id);
    removed.push(name);
  }
  return removed;
}
