import { z } from 'zod';
import { defineContract } from '../contract.js';


export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a member from the current organization (not its owner)',
  input: z.object({ userId: z.string() }),
  output: z.object({ userId: z.string(), removedFromPlatform: z.boolean() }),
  access: { role: 'admin' },
  description: 'The user account is deleted too when it belongs to no other organization.',
  example: { userId: 'usr_example' },
});
