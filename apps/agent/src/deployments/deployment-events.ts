/**
 * A deployment's events (status changes and log lines) as a command emits them: numbered
 * from 1 without gaps or repeats across agent restarts, journaled before they are sent,
 * then queued on the report client. Log lines are written by the handler and never carry
 * env values.
 */
import { CommandStatus, DeploymentStatus, timestampFromDate, type DeploymentEvent, type WorkloadRef } from '@skiff/proto';
import { AbandonedError } from '../abort/abandoned.js';
import type { CommandContext, CommandOutcome } from '../pipeline/handler.js';
import type { CommandJournal } from '../pipeline/journal.js';
import type { Reports } from '../pipeline/reports.js';

export interface EmitInput {
  status?: DeploymentStatus;
  lines?: string[];
  reason?: string;
}

export class DeploymentEvents {
  private sequence: number;

  constructor(
    private readonly journal: CommandJournal,
    private readonly reports: Reports,
    private readonly commandId: string,
    private readonly deploymentId: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    const events = journal.get(commandId)?.events ?? [];
    this.sequence = events.reduce((max, e) => Math.max(max, Number(e.sequence)), 0);
  }

  /** Status change and/or log lines as one event. */
  async emit({ status = DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED, lines = [], reason = '' }: EmitInput): Promise<void> {
    const time = timestampFromDate(this.now());
    const event: DeploymentEvent = {
      deploymentId: this.deploymentId,
      commandId: this.commandId,
      sequence: String(this.sequence + 1),
      status,
      logLines: lines.flatMap((l) => l.split('\n')).map((text) => ({ time, text })),
      reason,
      occurredAt: time,
    };
    await this.journal.recordEvent(this.commandId, event);
    this.sequence++;
    this.reports.reportEvent(event);
  }

  log(...lines: string[]): Promise<void> {
    return this.emit({ lines });
  }
}

/** Why a deploy command cannot be run for want of its deployment id or its workload (app_name and id), or null. */
export function checkDeployment(deploy: { deploymentId: string; workload?: WorkloadRef | undefined }): string | null {
  if (deploy.deploymentId === '') return 'deployment_id is empty';
  const workload = deploy.workload;
  if (!workload || workload.appName === '' || workload.id === '') return 'workload (with app_name and id) is missing';
  return null;
}

/** Ends a deployment in error with the reason, and its command failed. */
export type FailDeployment = (reason: string) => Promise<CommandOutcome>;

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs a deploy command's steps: a failure of one of the `expected` kinds ends the deployment
 * in error with its message, any other with "the agent failed"; an abandoned run (cancelled,
 * or the agent stopping) is rethrown for the runner.
 */
export async function runDeployment(
  context: CommandContext,
  events: DeploymentEvents,
  expected: ErrorClass[],
  steps: (fail: FailDeployment) => Promise<CommandOutcome>,
): Promise<CommandOutcome> {
  const fail: FailDeployment = async (reason) => {
    await events.emit({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, lines: [`Deployment failed: ${reason}`], reason });
    return { status: CommandStatus.COMMAND_STATUS_FAILED, reason };
  };
  try {
    return await steps(fail);
  } catch (err) {
    if (err instanceof AbandonedError || context.signal.aborted) throw err;
    if (expected.some((kind) => err instanceof kind)) return fail((err as Error).message);
    context.log.error({ err }, 'deploy failed unexpectedly');
    return fail(`the agent failed: ${(err as Error).message}`);
  }
}
