import { z } from 'zod';
import { defineContract } from '../contract.js';
import { MemberRecord } from '../records.js';

export const get = defineContract({
  method: 'GET',
  summary: 'The caller: user, role and permissions in the current organization',
  input: z.object({}),
  output: MemberRecord,
  example: {},
});
