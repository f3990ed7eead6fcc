import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BackupDatabaseType, Id, NonEmpty, JsonValue, KeepLatestCount } from '../primitives.js';
import { BackupRecord, METADATA_FIELD_DOC, METADATA_INPUT_DOC } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a backup schedule',
  description:
    '`enabled`, `keepLatestCount`, `serviceName` and `metadata` must be present (null ' +
    'allowed; `enabled` null keeps the current value). The target cannot change: ' +
    '`databaseType` must stay the same for database and web-server backups (create a new ' +
    'backup for another target); a compose backup may change `databaseType` (dbA…dbE) and ' +
    '`serviceName` (required; one of the stack\'s services where its raw file names them, ' +
    'and with room for another backup, as at create). `schedule`, `prefix`, `keepLatestCount` ' +
    'and `destinationId` follow the rules of backup.create. `includeEncryptionKey` (web-server ' +
    'backups only) is set when given and kept when absent. ' +
    METADATA_INPUT_DOC,
  input: z.object({
    schedule: z.string(),
    enabled: z.boolean().nullable(),
    prefix: NonEmpty,
    backupId: Id,
    destinationId: Id,
    database: NonEmpty,
    keepLatestCount: KeepLatestCount.nullable(),
    serviceName: z.string().nullable(),
    metadata: JsonValue.nullable().describe(METADATA_FIELD_DOC),
    databaseType: BackupDatabaseType,
    includeEncryptionKey: z.boolean().optional(),
  }),
  output: BackupRecord,
  example: {
    schedule: '0 4 * * *',
    enabled: true,
    prefix: 'nightly',
    backupId: 'bkp_example',
    destinationId: 'dst_example',
    database: 'shop',
    keepLatestCount: 14,
    serviceName: null,
    metadata: null,
    databaseType: 'dbA',
  },
});
