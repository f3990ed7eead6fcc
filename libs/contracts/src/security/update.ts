import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change the username and password of a basic-auth entry',
  description: 'The password is never returned.',
  input: z.object({ securityId: RequiredId, username: NonEmpty, password: NonEmpty }),
  output: Unspecified,
  example: { securityId: 'sec_example', username: 'admin', password: 'new-horse-battery' },
});
