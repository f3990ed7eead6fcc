import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const cleanSSHPrivateKey = defineContract({
  method: 'POST',
  summary: 'Remove the SSH private key stored for the host',
  description:
    'Forgets the stored key (doing so when none is stored changes nothing). Host settings ' +
    'affect every organization on this host: besides the `canAccessToSSHKeys` permission, the ' +
    'caller must be a platform administrator (the user created at first boot), FORBIDDEN ' +
    'otherwise. Answers the host settings.',
  input: z.object({}),
  output: HostSettingsRecord,
  access: { grant: 'canAccessToSSHKeys' },
  example: {},
});
