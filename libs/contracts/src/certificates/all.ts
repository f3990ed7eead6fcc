import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CertificateRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every certificate of the organization (without private keys)',
  description: 'Oldest first. Members see those of the platform host and of the servers they were given.',
  input: z.object({}),
  output: z.array(CertificateRecord),
  example: {},
});
