import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DestinationFields } from './fields.js';
import { DestinationRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a backup destination',
  description: 'Only the fields given change; leave `secretKey` out to keep the stored one.',
  input: DestinationFields.partial().extend({ destinationId: RequiredId }),
  output: DestinationRecord,
  access: { role: 'admin' },
  example: { destinationId: 'dst_example', bucket: 'acme-backups-2', secretKey: 'rotatedSecretKeyEXAMPLE' },
  extension: true,
});
