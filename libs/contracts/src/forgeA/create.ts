import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ForgeARecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Connect a forgeA (GitHub) App',
  description:
    'Registers a GitHub App the user created on the forge: `appId`, `clientId` and ' +
    '`clientSecret` from its settings, `privateKey` the PEM key generated for it, ' +
    '`webhookSecret` the secret its webhook deliveries are signed with, `installationId` the ' +
    'id of its installation on the account or organization whose repositories are deployed ' +
    '(may be set later with `forgeA.update`). `apiUrl` is the REST API base: ' +
    'https://api.github.com unless set (https://HOST/api/v3 for an enterprise server); an ' +
    'http(s) URL, link-local and cloud-metadata addresses refused. `authId` is the user the ' +
    'connection is created for (a member of the organization). The private key must be a ' +
    'readable RSA private key. Secrets are stored encrypted and never returned ' +
    '(`hasPrivateKey`, `hasClientSecret`, `hasWebhookSecret`). The ids (`forgeAId`, ' +
    '`gitProviderId`) are generated; a `gitProviderId` given here is ignored. A member who ' +
    'creates a connection is granted it. `accessToken` (optional, write-only: `hasAccessToken`) is a ' +
    'personal or fine-grained token, used instead of the App when no installation is set up. ' +
    'A connection needs the App (`appId` and `privateKey`) or an `accessToken`: without either ' +
    'it is BAD_REQUEST naming `accessToken`.',
  input: z.object({
    appName: z.string().optional(),
    appId: z.number().int().min(1).optional(),
    clientId: NonEmpty.optional(),
    clientSecret: NonEmpty.optional(),
    installationId: z.string().regex(/^\d+$/, 'the numeric installation id').optional(),
    privateKey: NonEmpty.optional(),
    webhookSecret: NonEmpty.optional(),
    apiUrl: z.string().optional(),
    accessToken: z.string().optional(),
    gitProviderId: z.string().optional(),
    authId: NonEmpty,
    name: NonEmpty,
  }),
  output: ForgeARecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: {
    appName: 'skiff-acme',
    appId: 123456,
    clientId: 'Iv1.0123456789abcdef',
    clientSecret: 'client-secret-example',
    installationId: '7654321',
    privateKey: '-----BEGIN RSA PRIVATE KEY-----\n…\n-----END RSA PRIVATE KEY-----\n',
    webhookSecret: 'webhook-secret-example',
    authId: 'usr_example',
    name: 'GitHub acme',
  },
});
