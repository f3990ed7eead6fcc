/**
 * BackupVolume: tar of the named volume in a throw-away container that mounts it read-only,
 * through gzip (and age, with the destination's passphrase) into a multipart upload (the dumps' plumbing: exec frames, s3-object.ts), so
 * no temporary file and bounded memory. A failed archive removes the object it began; the
 * container is removed whatever happens.
 */
import { PassThrough } from 'node:stream';
import { CommandKind, type Command } from '@skiff/proto';
import { compressInto } from '../dumps/archive-crypto.js';
import type { DatabaseContainers } from '../dumps/database-containers.js';
import { removeObject, s3Reason, uploadObject } from '../dumps/s3-object.js';
import { VOLUME_ARCHIVE } from '../dumps/tool-commands.js';
import type { VolumeContainers } from '../dumps/volume-containers.js';
import { refuseVolumeCommand } from '../dumps/volume-refusal.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';

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
      if (!(await deps.volumes.exists(volume))) return failed(`the volume ${volume} does not exist on this server: deploy the application first`);
      log.info({ objectKey: object!.key, bucket: object!.bucket, volume }, 'archiving the volume');
      const containerId = await deps.volumes.start(volume, true, command.commandId);
      try {
        const run = await deps.containers.run(containerId, VOLUME_ARCHIVE, false);
        const body = new PassThrough();
        try {
          await Promise.all([compressInto(run.output, body, object!, signal), uploadObject(object!, body, signal), run.exited()]);
        } catch (err) {
          run.cancel();
          body.destroy();
          await removeObject(object!).catch(() => undefined);
          if (signal.aborted) throw err;
          return failed((err as { $metadata?: unknown }).$metadata ? `the upload failed: ${s3Reason(err)}` : (err as Error).message);
        }
        return succeeded();
      } finally {
        await deps.volumes.remove(containerId).catch((err: unknown) => log.warn({ err, containerId }, 'the volume tool container could not be removed'));
      }
    },
  };
}
