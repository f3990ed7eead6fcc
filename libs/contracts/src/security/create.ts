import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty } from '../primitives.js';
import { SecurityRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: "Add basic-auth credentials in front of an application's domains",
  description:
    'The password is stored as a bcrypt hash and never returned; it may be at most 72 bytes ' +
    '(what bcrypt reads). `username` is unique per application, at most 255 characters, ' +
    'without `:` or control characters. Access follows access to the application.',
  input: z.object({ applicationId: Id, username: NonEmpty, password: NonEmpty }),
  output: SecurityRecord,
  example: { applicationId: 'app_example', username: 'admin', password: 'correct-horse-battery' },
});
