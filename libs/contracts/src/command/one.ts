import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CommandRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'The state of a queued command (stop, start, reload, cache deploys…)',
  description:
    'Follows what `application.stop`, `start`, `reload`, `compose.stop`, `start` and the `cache.*` ' +
    'lifecycle operations answered (`commandId`): poll until `status` is `done`, `failed` or ' +
    '`cancelled`. Access follows access to the application, compose stack or cache instance it acts ' +
    'on. Ended commands are kept `SKIFF_COMMAND_RETENTION_DAYS` (7) days; an older one is NOT_FOUND ' +
    '(deploys are followed with `deployment.all` and `deployment.readLogs`).',
  input: z.object({ commandId: RequiredId }),
  output: CommandRecord,
  example: { commandId: 'cmd_example' },
  extension: true,
});
