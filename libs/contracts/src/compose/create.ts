import { z } from 'zod';
import { defineContract } from '../contract.js';
import {
  AppName,
  ComposeSourceType,
  ComposeType,
  Id,
  NonEmpty,
} from '../primitives.js';
import { ComposeRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create a compose stack in an environment',
  description:
    'Optional fields: `appName` (derived from `name` with a random suffix when omitted), ' +
    '`sourceType` (where the compose file comes from; `raw` when omitted), `composeType` ' +
    '(`container-compose` or `stack`; `container-compose` when omitted), `description`, ' +
    '`serverId` (a remote server; null or omitted: the platform host) and `composeFile` ' +
    '(the compose YAML of a `raw` stack). `composePath` starts as `docker-compose.yml`. `appName` ' +
    'is unique on its server across applications, compose stacks and cache instances.',
  input: z.object({
    name: NonEmpty,
    environmentId: Id,
    appName: AppName.optional(),
    sourceType: ComposeSourceType.optional(),
    composeType: ComposeType.optional(),
    description: z.string().nullable().optional(),
    serverId: z.string().nullable().optional(),
    composeFile: z.string().optional(),
  }),
  output: ComposeRecord,
  access: { grant: 'canCreateServices' },
  example: {
    name: 'Monitoring',
    environmentId: 'env_example',
    appName: 'monitoring',
    sourceType: 'raw',
    composeType: 'container-compose',
    composeFile: 'services:\n  grafana:\n    image: grafana/grafana:11.1.0\n',
  },
});
