import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { SecurityRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change the username and password of a basic-auth entry',
  description: 'The same rules as `security.create`; the password is never returned.',
  input: z.object({ securityId: RequiredId, username: NonEmpty, password: NonEmpty }),
  output: SecurityRecord,
  example: { securityId: 'sec_example', username: 'admin', password: 'new-horse-battery' },
});
