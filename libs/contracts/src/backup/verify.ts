import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

export const verify = defineContract({
  method: 'POST',
  summary: 'Prove that a database backup restores: its file restored in a throw-away container',
  description:
    'Restores `key` (one of the backup’s files, as `backup.listBackupFiles` lists ' +
    'them; default: its newest) into a throw-away container of the database service’s image (of a compose ' +
    'stack’s service: the image that service runs as deployed on its server, refused when that server does not ' +
    'have it, never pulled; the engine is the backup’s `databaseType`), on its server, without a network and with ' +
    'its own credentials; checks that the database opens and counts the rows of each table; then ' +
    'removes the container, whatever happened. The running database (or the stack’s containers and volumes) is not touched and need not run. ' +
    'PostgreSQL, MariaDB, MySQL, MongoDB and libSQL backups, of database services and of compose stacks’ services. Answers the queued verification; ' +
    '`backup.oneVerification` follows it. A failed verification is a `databaseBackup` failure event ' +
    'with `verify: true`. The scheduler also verifies the file of each successful scheduled run.',
  input: z.object({ backupId: RequiredId, key: z.string().min(1).nullable().optional() }),
  output: z.object({ verificationId: z.string(), commandId: z.string(), key: z.string(), status: z.literal('queued') }),
  example: { backupId: 'bkp_example' },
});
