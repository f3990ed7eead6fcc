import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ComposeCommand } from './deployed.js';

export const getDefaultCommand = defineContract({
  method: 'GET',
  summary: 'The command used to deploy the stack',
  description:
    'The arguments the deploy gives the compose program (`docker compose` / `docker-compose` for ' +
    '`container-compose`, `docker stack` for `stack`), after the project name and file the agent ' +
    "adds: the stack's custom `command` when it has one, else the default of its composeType " +
    '(`up -d --build --remove-orphans`; `deploy --prune --with-registry-auth`).',
  input: z.object({ composeId: RequiredId }),
  output: ComposeCommand,
  example: { composeId: 'cmp_example' },
});
