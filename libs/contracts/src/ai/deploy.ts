import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty, RequiredId, Unspecified } from '../primitives.js';

const SuggestedDomain = z.object({
  host: NonEmpty,
  port: z.number().min(1).optional(),
  serviceName: NonEmpty,
  path: z.string().optional(),
});

const SuggestedConfigFile = z.object({
  filePath: NonEmpty,
  content: z.string(),
});

export const deploy = defineContract({
  method: 'POST',
  summary: 'Create a compose stack from an AI suggestion and deploy it',
  description:
    'Creates a compose stack named `name` in the environment from `containerCompose` (the ' +
    'compose file) and `envVariables` (dotenv text), then queues its deploy. `id` is the ' +
    'suggestion id answered by `ai.suggest`. `domains`, when given, routes each `host` ' +
    '(optionally under `path`) to the compose service `serviceName` on `port` (the port the ' +
    'service listens on inside the stack network). `configFiles`, when given, are written ' +
    'next to the compose file before the deploy: `filePath` is relative to the stack ' +
    'directory (no `..`, no absolute path) and `content` is the file text; the compose file ' +
    'mounts them by that relative path.',
  input: z.object({
    environmentId: RequiredId,
    id: NonEmpty,
    containerCompose: NonEmpty,
    envVariables: z.string(),
    serverId: Id.optional(),
    name: NonEmpty,
    description: z.string(),
    domains: z
      .array(SuggestedDomain)
      .optional()
      .describe('routes `{host, port?, serviceName, path?}` to compose services'),
    configFiles: z
      .array(SuggestedConfigFile)
      .optional()
      .describe('files `{filePath, content}` written next to the compose file'),
  }),
  output: Unspecified,
  access: { grant: 'canCreateServices' },
  example: {
    environmentId: 'env_example',
    id: 'umami',
    containerCompose:
      'services:\n  umami:\n    image: ghcr.io/umami-software/umami:postgresql-latest\n' +
      '    environment:\n      DATABASE_URL: ${DATABASE_URL}\n',
    envVariables: 'DATABASE_URL=postgresql://umami:secret@db:5432/umami',
    name: 'umami',
    description: 'Web analytics',
    domains: [{ host: 'stats.example.com', port: 3000, serviceName: 'umami' }],
    configFiles: [{ filePath: 'config/umami.env', content: 'APP_SECRET=change-me\n' }],
  },
});
