import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';
import { DestinationFields, destinationExample } from './fields.js';

export const testConnection = defineContract({
  method: 'POST',
  summary: 'Check that a bucket can be listed and written with these settings, without storing them',
  description:
    'Writes and removes a small probe object in the bucket. Link-local and cloud-metadata ' +
    'endpoints are refused.',
  input: DestinationFields,
  output: Empty,
  access: { role: 'admin' },
  example: destinationExample,
  extension: true,
});
