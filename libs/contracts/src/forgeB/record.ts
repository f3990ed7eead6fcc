import { z } from 'zod';
import { GitProviderFields } from '../gitProvider/record.js';

/**
 * A forgeB (GitLab) connection as responses show it. The OAuth application `secret` is
 * write-only: stored encrypted, never returned; `hasSecret` says whether one is set.
 */
export const ForgeBRecord = GitProviderFields.extend({
  forgeBId: z.string(),
  forgeBUrl: z.string().describe('the instance address (https://gitlab.com or a self-hosted one); its API is `{forgeBUrl}/api/v4`'),
  forgeBInternalUrl: z.string().nullable().describe('the address the platform uses to reach the instance, when different'),
  applicationId: z.string().nullable().describe('the OAuth application id'),
  redirectUri: z.string().nullable(),
  groupName: z.string().nullable().describe('repositories are limited to this group'),
  hasSecret: z.boolean(),
  hasAccessToken: z.boolean().describe('an OAuth access token or a personal/group token is set'),
  hasRefreshToken: z.boolean().describe('an OAuth refresh token is set: an expired or refused access token is renewed with it'),
});
