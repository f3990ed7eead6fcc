import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ForgeARecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeA (GitHub App) connection',
  description:
    "`name` is replaced; other fields left out are kept, and so are secrets. `gitProviderId` " +
    "must be the connection's own; `organizationId`, when given, must be the connection's " +
    'own organization (the caller\'s). Rules for each field as in `forgeA.create`.',
  input: z.object({
    forgeAId: RequiredId,
    appName: z.string().optional(),
    appId: z.number().int().min(1).optional(),
    clientId: NonEmpty.optional(),
    clientSecret: NonEmpty.optional(),
    installationId: z.string().regex(/^\d+$/, 'the numeric installation id').optional(),
    privateKey: NonEmpty.optional(),
    webhookSecret: NonEmpty.optional(),
    apiUrl: z.string().optional(),
    accessToken: z.string().optional(),
    gitProviderId: RequiredId,
    name: NonEmpty,
    organizationId: z.string().optional(),
  }),
  output: ForgeARecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeAId: 'fga_example', gitProviderId: 'gp_example', name: 'GitHub acme', installationId: '7654322' },
});
