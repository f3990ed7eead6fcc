import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const updateContainerCleanup = defineContract({
  method: 'POST',
  summary: 'Turn the scheduled daily container cleanup on or off',
  description:
    'Records the choice (off by default); the daily job prunes unused images, stopped ' +
    'containers and build cache, never volumes, and skips while a build runs. Host settings ' +
    'affect every organization on this host: besides the admin role, the caller must be a ' +
    'platform administrator (the user created at first boot), FORBIDDEN otherwise. Answers the ' +
    'host settings.',
  input: z.object({ enableContainerCleanup: z.boolean() }),
  output: HostSettingsRecord,
  access: { role: 'admin' },
  example: { enableContainerCleanup: true },
});
