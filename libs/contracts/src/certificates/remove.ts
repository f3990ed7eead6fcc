import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CertificateRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a stored certificate and its files from the proxy',
  description: 'Answers the removed record. Its files leave the proxy host with the proxy configuration (agent).',
  input: z.object({ certificateId: RequiredId }),
  output: CertificateRecord,
  access: { role: 'admin' },
  example: { certificateId: 'crt_example' },
});
