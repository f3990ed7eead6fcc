import { z } from 'zod';

/** A verification of a backup file (`backup.verify`), as `backup.oneVerification` and `backup.verifications` answer it. */
export const VerificationRecord = z.object({
  verificationId: z.string(),
  backupId: z.string(),
  key: z.string(),
  commandId: z.string(),
  trigger: z.enum(['manual', 'scheduled']),
  status: z.enum(['running', 'done', 'error']),
  /** The restored database's tables (`schema.table` for PostgreSQL) with exact row counts; null until it is `done`. */
  tables: z.array(z.object({ name: z.string(), rows: z.number().int().nonnegative() })).nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});
