import { z } from 'zod';
import { defineContract } from '../contract.js';
import { MemberRecord } from '../records.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A member of the current organization (admins: anyone; members: themselves)',
  input: z.object({ userId: z.string() }),
  output: MemberRecord,
  example: { userId: 'usr_example' },
});
