import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: "Add basic-auth credentials in front of an application's domains",
  description: 'The password is never returned.',
  input: z.object({ applicationId: Id, username: NonEmpty, password: NonEmpty }),
  output: Unspecified,
  example: { applicationId: 'app_example', username: 'admin', password: 'correct-horse-battery' },
});
