import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { SshKeyRecord } from './record.js';

export const generate = defineContract({
  method: 'POST',
  summary: 'Generate and store an ed25519 SSH key pair',
  description:
    'Answers the stored record with its public key (add it as a deploy key on the forge); ' +
    'the private key never leaves the platform.',
  input: z.object({
    name: NonEmpty,
    description: z.string().nullable().optional(),
  }),
  output: SshKeyRecord,
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: { name: 'deploy key', description: 'For the shop repository' },
});
