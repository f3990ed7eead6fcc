import { z } from 'zod';
import { GitProviderFields } from '../gitProvider/record.js';

/**
 * A forgeC (Bitbucket) connection as responses show it. `appPassword` and `apiToken` are
 * write-only: stored encrypted, never returned; `has<Field>` says whether one is set.
 */
export const ForgeCRecord = GitProviderFields.extend({
  forgeCId: z.string(),
  forgeCUsername: z.string().nullable(),
  forgeCEmail: z.string().nullable(),
  forgeCWorkspaceName: z.string().nullable().describe('repositories are limited to this workspace'),
  apiUrl: z.string().describe('the REST API base (https://api.bitbucket.org/2.0 unless set)'),
  hasAppPassword: z.boolean(),
  hasApiToken: z.boolean(),
});
