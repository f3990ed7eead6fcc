import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DeploymentRecord } from '../deployment/record.js';
import { RequiredId } from '../primitives.js';

export const dropDeployment = defineContract({
  method: 'POST',
  summary: 'Upload an archive of a `drop` application and queue its deployment',
  description:
    'The upload of `drop` sources. A `multipart/form-data` request with the text ' +
    'parts `applicationId` and optional `title` and `description`, and the file part `archive`: a ' +
    'zip or a tar.gz, recognised by its content (not its name). The archive is refused (BAD_REQUEST ' +
    'naming `archive`, nothing kept) when it is larger than the server\'s limit ' +
    '(`SKIFF_MAX_ARCHIVE_BYTES`, 256 MiB by default), is neither format, or holds an entry that ' +
    'breaks the archive rules: `..` segments, absolute paths, drive letters or backslashes, ' +
    'symbolic or hard links, devices, too many entries, too many bytes once unpacked, or a zip ' +
    'entry whose declared size is false or whose compression ratio is implausible (the message ' +
    'names the first such entry). The application must have `sourceType: drop` (else BAD_REQUEST ' +
    'naming `sourceType`). A single top-level folder in the archive is flattened when it is ' +
    'unpacked, and the tree is built with the application\'s build type. The newest 3 archives of ' +
    'an application are kept. Answers the queued deployment, like `application.deploy`.',
  input: z.object({
    applicationId: RequiredId,
    title: z.string().optional(),
    description: z.string().optional(),
  }),
  output: DeploymentRecord,
  example: { applicationId: 'app_example', title: 'Site upload' },
  extension: true,
  upload: { field: 'archive', description: 'The archive: a zip or a tar.gz file.' },
});
