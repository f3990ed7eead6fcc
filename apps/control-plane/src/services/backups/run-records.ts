import type { Db } from '@skiff/db';

/**
 * A backup run's command ended (DumpDatabase, BackupVolume: agents/outbound/kinds): its run
 * moves to `ended` with the agent's outcome, in the transaction that recorded the result on
 * the command's row, so a result redelivered (the command already ended) never comes here
 * twice. BackupRuns (runs.ts) then records the run's event, whichever control plane it is.
 */
export async function endRunOfCommand(tx: Db, commandId: string, outcome: { succeeded: boolean; reason: string | null; at: Date }): Promise<void> {
  await tx
    .updateTable('backupRuns')
    .set({ status: 'ended', succeeded: outcome.succeeded, error: outcome.succeeded ? null : (outcome.reason ?? 'the agent did not say why'), endedAt: outcome.at })
    .where('commandId', '=', commandId)
    .where('status', '=', 'running')
    .execute();
}
