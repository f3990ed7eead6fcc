import { defineContract } from '../contract.js';
import { DestinationFields, destinationExample } from './fields.js';
import { DestinationRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Register an S3-compatible bucket that backups are written to',
  description:
    'Both keys are stored encrypted; `secretKey` is never returned. The connection is not ' +
    'tried here (see destination.testConnection).',
  input: DestinationFields,
  output: DestinationRecord,
  access: { role: 'admin' },
  example: destinationExample,
  extension: true,
});
