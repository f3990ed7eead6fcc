import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Id } from '../primitives.js';

export const saveEnvironment = defineContract({
  method: 'POST',
  summary: 'Save the environment variables, build arguments and build secrets of the application',
  input: z.object({
    applicationId: Id,
    env: z.string().nullable(),
    buildArgs: z.string().nullable(),
    buildSecrets: z.string().nullable(),
    createEnvFile: z.boolean(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    env: 'NODE_ENV=production\nDATABASE_URL=${{environment.DATABASE_URL}}',
    buildArgs: 'NODE_VERSION=20',
    buildSecrets: null,
    createEnvFile: true,
  },
});
