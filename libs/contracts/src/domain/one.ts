import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DomainRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A domain',
  input: z.object({ domainId: RequiredId }),
  output: DomainRecord,
  example: { domainId: 'dom_example' },
});
