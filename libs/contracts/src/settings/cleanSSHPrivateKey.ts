import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const cleanSSHPrivateKey = defineContract({
  method: 'POST',
  summary: 'Remove the SSH private key stored for the host',
  input: z.object({}),
  output: Empty,
  access: { grant: 'canAccessToSSHKeys' },
  example: {},
});
