import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { FileContent, FilePath, HostPath, MountPath, MountRecord, MountType, VolumeName } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Add a mount to an application: a named volume, a file or a host path',
  description:
    'Takes effect at the next deploy. `volume` needs `volumeName`: the volume is created on the server ' +
    'with the application\'s `skiff.*` labels, kept across redeploys, and removed only by ' +
    '`application.delete` with `deleteVolumes`; a name another workload of the server has or could have (another application\'s, one Skiff makes from a workload\'s appName, Skiff\'s own) is BAD_REQUEST, and a volume not made for the application is refused when deployed. ' +
    '`file` needs `filePath` (relative, under the application\'s folder on the server) and `content`, ' +
    'mounted read-only; with `secret` the content is sealed at rest and never answered. `bind` needs ' +
    '`hostPath` and is BAD_REQUEST on the platform host unless a platform administrator trusts the ' +
    'organization (`settings.trustOrganization`); remote servers are their organization\'s own. ' +
    'Fields of another type are BAD_REQUEST; each `mountPath` once per application.',
  input: z.object({
    applicationId: RequiredId,
    type: MountType,
    mountPath: MountPath,
    volumeName: VolumeName.optional(),
    hostPath: HostPath.optional(),
    filePath: FilePath.optional(),
    content: FileContent.optional(),
    secret: z.boolean().optional(),
  }),
  output: MountRecord,
  access: { grant: 'canCreateServices' },
  example: { applicationId: 'app_example', type: 'volume', volumeName: 'app-data', mountPath: '/data' },
  extension: true,
});
