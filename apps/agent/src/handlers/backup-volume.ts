/**
 * BackupVolume: tar of the named volume in a throw-away container that mounts it read-only,
 * through gzip (and age, with the destination's passphrase) into a multipart upload (the dumps' plumbing: exec frames, s3-object.ts), so
 * no temporary file and bounded memory. A failed archive removes the object it began; the
 * container is removed whatever happens.
 */
import { CommandKind, type Command } from '@skiff/proto';
import { archiveToolOutput } from '../dumps/tool-archives.js';
import type { DatabaseContainers } from '../dumps/database-containers.js';
import { VOLUME_ARCHIVE } from '../dumps/tool-commands.js';
import type { VolumeContainers } from '../dumps/volume-containers.js';
import { foreignVolume } from '../deployments/volume-claims.js';
import { refuseVolumeCommand } from '../dumps/volume-refusal.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';
import { scrubToolReason } from './tool-reason.js';

export interface VolumeCommandDeps {
  /** Runs the archive tool (docker exec) in the throw-away container. */
  containers: DatabaseContainers;
  volumes: VolumeContainers;
}

export function backupVolumeHandler(deps: VolumeCommandDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_BACKUP_VOLUME,
    payloadCase: 'backupVolume',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'backupVolume') return 'not a BackupVolume command';
      return refuseVolumeCommand(command.payload.value.target, command.payload.value.object);
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'backupVolume') return failed('not a BackupVolume command');
      const { target, object } = command.payload.value;
      const volume = target!.volumeName;
      const labels = await deps.volumes.labels(volume);
      if (!labels) return failed(`the volume ${volume} does not exist on this server: deploy the application first`);
      const foreign = foreignVolume(volume, labels, target!.workload!.id);
      if (foreign) return failed(foreign);
      log.info({ objectKey: object!.key, bucket: object!.bucket, volume }, 'archiving the volume');
      const containerId = await deps.volumes.start(volume, true, command.commandId);
      try {
        const why = await archiveToolOutput(await deps.containers.run(containerId, VOLUME_ARCHIVE, false), object!, signal);
        if (why) return failed(scrubToolReason(why, object, []));
        return succeeded();
      } finally {
        await deps.volumes.remove(containerId).catch((err: unknown) => log.warn({ err, containerId }, 'the volume tool container could not be removed'));
      }
    },
  };
}
