import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { FileContent, FilePath, HostPath, MountPath, MountRecord, VolumeName } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a mount of an application',
  description:
    'Changes the fields given (its type stays); the same rules as `mounts.create`. Takes effect at the next ' +
    'deploy. A changed `volumeName` mounts another volume: the old one is kept until the application is ' +
    'deleted with `deleteVolumes`.',
  input: z.object({
    mountId: RequiredId,
    mountPath: MountPath.optional(),
    volumeName: VolumeName.optional(),
    hostPath: HostPath.optional(),
    filePath: FilePath.optional(),
    content: FileContent.optional(),
    secret: z.boolean().optional(),
  }),
  output: MountRecord,
  access: { grant: 'canCreateServices' },
  example: { mountId: 'mnt_example', mountPath: '/var/data' },
  extension: true,
});
