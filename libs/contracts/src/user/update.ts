import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, NonEmpty } from '../primitives.js';
import { UserRecord } from '../records.js';

export const update = defineContract({
  method: 'POST',
  summary: "Change the caller's own profile",
  input: z.object({
    name: NonEmpty.optional(),
    lastName: NonEmpty.optional(),
    email: Email.optional(),
    image: z.string().nullable().optional(),
  }),
  output: UserRecord,
  description: 'Fields: name and lastName (non-empty), email (unique across users), image (a URL or null).',
  example: { name: 'Ada', email: 'ada@example.com' },
});
