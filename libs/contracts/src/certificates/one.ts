import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CertificateRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A stored certificate (without its private key)',
  input: z.object({ certificateId: RequiredId }),
  output: CertificateRecord,
  example: { certificateId: 'crt_example' },
});
