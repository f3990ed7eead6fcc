import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DomainRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a domain and its route',
  description: 'Answers the removed record.',
  input: z.object({ domainId: RequiredId }),
  output: DomainRecord,
  example: { domainId: 'dom_example' },
});
