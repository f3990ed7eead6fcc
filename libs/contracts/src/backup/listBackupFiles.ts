import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const listBackupFiles = defineContract({
  method: 'GET',
  summary: 'The backup files stored in a destination whose path starts with a search text',
  description:
    '`search` is a path prefix inside the destination bucket (for example `<appName>/` or ' +
    '`<appName>/<prefix>`); empty lists from the bucket root. Owners and admins list any path; ' +
    'anyone else only inside the folder of a backup or volume backup on that destination they ' +
    'may see (`<prefix><backupId>/`), else FORBIDDEN. `serverId`, when given, must be a server the ' +
    'caller may use (unknown or another organization\'s: BAD_REQUEST); the listing is the destination\'s ' +
    'whichever server is named.',
  input: z.object({ destinationId: Id, search: z.string(), serverId: Id.optional() }),
  output: z.array(Unspecified),
  example: { destinationId: 'dst_example', search: 'shop-db/nightly/' },
});
