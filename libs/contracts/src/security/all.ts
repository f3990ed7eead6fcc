import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { SecurityRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: "An application's basic-auth entries, oldest first (their passwords are never returned)",
  input: z.object({ applicationId: RequiredId }),
  output: z.array(SecurityRecord),
  example: { applicationId: 'app_example' },
});
