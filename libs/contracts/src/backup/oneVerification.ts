import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VerificationRecord } from './verification-record.js';

export const oneVerification = defineContract({
  method: 'GET',
  summary: 'A verification of a backup file: its status, the tables found with their row counts, or why it failed',
  description: '`status` is `running` until the agent answers, then `done` (with `tables`) or `error` (with `error`).',
  input: z.object({ verificationId: RequiredId }),
  output: VerificationRecord,
  example: { verificationId: 'vrf_example' },
});
