import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** The kinds of git forge connection: GitHub App, GitLab, Bitbucket, Gitea/Forgejo. */
export const ForgeKind = z.enum(['forgeA', 'forgeB', 'forgeC', 'forgeD']);

/** What every forge connection record shows, whatever its kind. */
export const GitProviderFields = z.object({
  gitProviderId: z.string().describe('the id members are granted in `accessedGitProviders`'),
  organizationId: z.string(),
  name: z.string(),
  authId: z.string().describe('the user the connection was created for'),
  userId: z.string().describe('the user who created the connection'),
  createdAt: Timestamp,
});

/** One connection of any kind, as `gitProvider.getAll` lists it. */
export const GitProviderSummary = GitProviderFields.extend({
  kind: ForgeKind.describe('forgeA (GitHub App), forgeB (GitLab), forgeC (Bitbucket) or forgeD (Gitea/Forgejo)'),
  forgeId: z.string().describe('the connection id of its kind: its `forgeAId`, `forgeBId`, `forgeCId` or `forgeDId`'),
});
