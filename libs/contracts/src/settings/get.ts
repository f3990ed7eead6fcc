import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const get = defineContract({
  method: 'GET',
  summary: 'The host settings: platform domain, container cleanup, SSH key, public IP',
  description:
    'Host settings belong to the platform host and are shared by every organization on it; ' +
    'any organization admin may read them, only a platform administrator (the user created at ' +
    'first boot) may change them. The SSH private key is never returned.',
  input: z.object({}),
  output: HostSettingsRecord,
  access: { role: 'admin' },
  extension: true,
  example: {},
});
