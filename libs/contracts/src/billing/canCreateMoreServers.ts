import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const canCreateMoreServers = defineContract({
  method: 'GET',
  summary: "Whether the organization's subscription allows registering another server",
  input: z.object({}),
  output: Unspecified,
  example: {},
});
