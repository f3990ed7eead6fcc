import { z } from 'zod';
import { defineContract } from '../contract.js';
import { MemberRecord } from '../records.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The members of the current organization',
  input: z.object({}),
  output: z.array(MemberRecord),
  access: { role: 'admin' },
  example: {},
});
