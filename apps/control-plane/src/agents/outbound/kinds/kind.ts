import type { Db } from '@skiff/db';
import { type CommandKind, CommandStatus, type DatabaseVerification, type PublishedHostPorts } from '@skiff/proto';
import type { RouteRemoval } from '../../../services/deployments/workloads.js';
import type { WorkloadType } from '../workload-key.js';

/**
 * What a command kind is to the control plane (docs/architecture.md, "How to add a command
 * kind"). Each file beside this one defines one kind: a builder function (exported, and
 * called by the service that queues the command: its payload, deadline and workload key),
 * and the definition below, which says what its result does to the records. The registry
 * (index.ts) holds the definitions, for results only: the report handling
 * (agents/inbound/deployment-reports.ts) looks each result up there. `applyResult` sees
 * every end, CANCELLED included: a kind whose cancel should leave the records as they were
 * returns early on it (workload-lifecycle.ts), one whose record would stay `running`
 * moves it on (cache-deploy.ts).
 */

export { type WorkloadType, parseWorkloadKey, workloadKey } from '../workload-key.js';

/** A command row whose result arrived (or whose deadline passed), as its kind reads it. */
export interface EndedCommand {
  id: string;
  kind: string;
  workloadKey: string;
  deploymentId: string | null;
  /** The row's place in the outbox (later commands of the workload have higher positions). */
  position: string | number;
}

/** A result, as a kind applies it to its records: inside the transaction that recorded it on the command row. */
export interface CommandResultContext {
  tx: Db;
  command: EndedCommand;
  status: CommandStatus;
  /** The reason kept on the command row; null when it succeeded. */
  reason: string | null;
  /** When the agent finished the command. */
  at: Date;
  /** What a VerifyDatabase found (CommandResult.verification); absent for other kinds. */
  verification?: DatabaseVerification;
  /** The host ports a DeployCompose's file as deployed publishes (CommandResult.published_host_ports); absent for other kinds. */
  publishedHostPorts?: PublishedHostPorts;
  /** The host ports a compose stack may publish (`SKIFF_MAX_COMPOSE_PORTS`): no more of a report are kept. */
  maxHostPorts?: number;
  /** Runs a delete of records carrying domains and queues the proxy configs that routed to them (absent in some tests). */
  proxy?: RouteRemoval;
}

export interface CommandKindDefinition {
  /** Its name, in messages and the registry's checks. */
  readonly name: string;
  /** The wire kinds it covers (one, or the lifecycle four). */
  readonly kinds: readonly CommandKind[];
  /** The workloads it acts on (the type part of the rows' workload keys). */
  readonly workloads: readonly WorkloadType[];
  /** A deploy (a build, a pull or a rollout): what killBuild may stop. */
  readonly deploys?: boolean;
  /**
   * Deployment events of its commands that name no deployment record: `set aside` takes them
   * (cache instances keep no deployment records); by default they are refused as NOT_FOUND.
   */
  readonly unrecordedEvents?: 'set aside';
  /** What the result does to the records (statuses, deployment rows, deletes). */
  applyResult(result: CommandResultContext): Promise<void>;
}

export const defineCommandKind = <D extends CommandKindDefinition>(definition: D): D => definition;

export const succeeded = (status: CommandStatus) => status === CommandStatus.COMMAND_STATUS_SUCCEEDED;

/** A deadline `ms` after `from`. */
export const after = (from: Date, ms: number) => new Date(from.getTime() + ms);
