import { z } from 'zod';
import { GitProviderFields } from '../gitProvider/record.js';
import { NonEmpty } from '../primitives.js';

/**
 * A forgeD (Gitea or Forgejo) connection as responses show it. `clientSecret` and
 * `accessToken` are write-only: stored encrypted, never returned; `has<Field>` says whether
 * one is set.
 */
export const ForgeDRecord = GitProviderFields.extend({
  forgeDId: z.string(),
  forgeDUrl: z.string().describe('the instance address; its API is `{forgeDUrl}/api/v1`'),
  forgeDInternalUrl: z.string().nullable().describe('the address the platform uses to reach the instance, when different'),
  clientId: z.string().nullable().describe('the OAuth application id'),
  redirectUri: z.string().nullable(),
  organizationName: z.string().nullable().describe('repositories are limited to this organization'),
  hasClientSecret: z.boolean(),
  hasAccessToken: z.boolean(),
});

/** The connection's settings, as `forgeD.create` and `forgeD.update` take them. */
export const ForgeDSettings = {
  forgeDUrl: NonEmpty,
  forgeDInternalUrl: z.string().nullable().optional(),
  clientId: z.string().optional(),
  clientSecret: z.string().optional(),
  redirectUri: z.string().optional(),
  accessToken: z.string().optional(),
  organizationName: z.string().optional(),
};
