import { z } from 'zod';
import { GitProviderFields } from '../gitProvider/record.js';

/**
 * A forgeA (GitHub App) connection as responses show it. The private key, client secret and
 * webhook secret are write-only: stored encrypted, never returned; `has<Field>` says whether
 * one is set.
 */
export const ForgeARecord = GitProviderFields.extend({
  forgeAId: z.string(),
  appName: z.string().nullable().describe('the App\'s slug on the forge'),
  appId: z.number().nullable().describe('the numeric App id (null for a connection by token)'),
  clientId: z.string().nullable(),
  installationId: z.string().nullable().describe('the numeric id of the App installation used'),
  apiUrl: z.string().describe('the REST API base (https://api.github.com, or https://HOST/api/v3 for an enterprise server)'),
  hasPrivateKey: z.boolean(),
  hasClientSecret: z.boolean(),
  hasWebhookSecret: z.boolean(),
  hasAccessToken: z.boolean().describe('a personal token is set (used when the App has no installation)'),
});
