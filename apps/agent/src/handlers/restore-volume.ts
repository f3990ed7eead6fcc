/**
 * RestoreVolume: the bucket object (decrypted when it is an .age file) through gunzip into tar in a throw-away container that
 * mounts the volume, after emptying it. Refused while a running container mounts the volume,
 * unless the command says `force` (the caller accepted writing under a running service). Only
 * the application's own volume (its labels) is written; a missing one is made with them.
 */
import { CommandKind, type Command } from '@skiff/proto';
import { feedTool, openArchive } from '../dumps/tool-archives.js';
import { VOLUME_EXTRACT } from '../dumps/tool-commands.js';
import { applicationVolumeLabels, foreignVolume } from '../deployments/volume-claims.js';
import { refuseVolumeCommand } from '../dumps/volume-refusal.js';
import { volumeToolName } from '../dumps/throwaway-leftovers.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';
import { scrubToolReason } from './tool-reason.js';
import type { VolumeCommandDeps } from './backup-volume.js';


export function restoreVolumeHandler(deps: VolumeCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_RESTORE_VOLUME,
    payloadCase: 'restoreVolume',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'restoreVolume') return 'not a RestoreVolume command';
      return refuseVolumeCommand(command.payload.value.target, command.payload.value.object);
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'restoreVolume') return failed('not a RestoreVolume command');
      const { target, object, force } = command.payload.value;
      const volume = target!.volumeName;
      const labels = await deps.volumes.labels(volume);
      const foreign = labels && foreignVolume(volume, labels, target!.workload!.id);
      if (foreign) return failed(foreign);
      // What an interrupted run of this command left mounts the volume too.
      await deps.volumes.remove(volumeToolName(command.commandId));
      const users = await deps.volumes.mountedBy(volume);
      if (users.length > 0 && !force) {
        return failed(`the volume ${volume} is mounted by running containers (${users.join(', ')}): stop the application first, or restore with force`);
      }
      let source;
      try {
        source = await openArchive(object!);
      } catch (err) {
        return failed(scrubToolReason((err as Error).message, object, []));
      }
      log.info({ objectKey: object!.key, bucket: object!.bucket, volume }, 'restoring the volume');
      let containerId: string | null = null;
      try {
        // A volume that is gone is made again as the application's, so its next deploy claims it.
        if (!labels) await deps.volumes.create(volume, applicationVolumeLabels(target!.workload!.id));
        containerId = await deps.volumes.start(volume, false, command.commandId);
        const why = await feedTool(await deps.containers.run(containerId, VOLUME_EXTRACT, true), source, signal);
        if (why) return failed(scrubToolReason(why.download ? why.reason : `the restore failed: ${why.reason}`, object, []));
        return succeeded();
      } finally {
        source.destroy();
        if (containerId) await deps.volumes.remove(containerId).catch((err: unknown) => log.warn({ err, containerId }, 'the volume tool container could not be removed'));
      }
    },
  };
}
