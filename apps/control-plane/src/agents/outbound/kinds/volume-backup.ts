import { wireServerId } from '@skiff/domain';
import { type Command, CommandKind, type S3Object, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { endRunOfCommand } from '../../../services/backups/run-records.js';
import { type CommandResultContext, defineCommandKind, succeeded, workloadKey } from './kind.js';

/**
 * Backups and restores of an application's named volume (BackupVolume, RestoreVolume): the
 * agent of the application's server archives or extracts the volume in a throw-away
 * container. Keyed like the application's other commands, so they run in order with its
 * deploys. A backup's result ends its `backup_runs` row (services/backups/runs.ts records its
 * event); a restore's result ends its `volume_restores` record, with the reason as its log.
 */

export interface VolumeCommandInput {
  commandId: string;
  application: { id: string; appName: string; serverId: string | null };
  volumeName: string;
  object: S3Object;
  createdAt: Date;
  deadline: Date;
  /** Restore only: the caller accepted writing under a running container. */
  force?: boolean;
}

function volumeCommand(input: VolumeCommandInput, restore: boolean): Command {
  const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: input.application.id, appName: input.application.appName }, volumeName: input.volumeName };
  return {
    commandId: input.commandId,
    serverId: wireServerId(input.application.serverId),
    kind: restore ? CommandKind.COMMAND_KIND_RESTORE_VOLUME : CommandKind.COMMAND_KIND_BACKUP_VOLUME,
    workloadKey: workloadKey('application', input.application.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: restore
      ? { $case: 'restoreVolume', value: { target, object: input.object, force: input.force ?? false } }
      : { $case: 'backupVolume', value: { target, object: input.object } },
  };
}

export const backupVolumeCommand = (input: VolumeCommandInput) => volumeCommand(input, false);
export const restoreVolumeCommand = (input: VolumeCommandInput) => volumeCommand(input, true);

async function applyVolumeResult({ tx, command, status, reason, at }: CommandResultContext): Promise<void> {
  if (command.kind !== 'COMMAND_KIND_RESTORE_VOLUME') return endRunOfCommand(tx, command.id, { succeeded: succeeded(status), reason, at });
  await tx
    .updateTable('volumeRestores')
    .set({ status: succeeded(status) ? 'done' : 'error', log: succeeded(status) ? 'restored' : (reason ?? 'the restore did not end'), finishedAt: at })
    .where('commandId', '=', command.id)
    .execute();
}

export const volumeBackup = defineCommandKind({
  name: 'volume backup',
  kinds: [CommandKind.COMMAND_KIND_BACKUP_VOLUME, CommandKind.COMMAND_KIND_RESTORE_VOLUME],
  workloads: ['application'],
  applyResult: applyVolumeResult,
});
