import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const get = defineContract({
  method: 'GET',
  summary: 'The host settings: platform domain, container cleanup, SSH key, public IP',
  description:
    'Host settings belong to the platform host and are shared by every organization on it; ' +
    'only a platform administrator (the user created at first boot, acting through a membership ' +
    'that makes them one) may read or change them; anyone else is FORBIDDEN. The SSH private key ' +
    'is never returned.',
  input: z.object({}),
  output: HostSettingsRecord,
  access: { role: 'admin' },
  extension: true,
  example: {},
});
