import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { Id } from '../primitives.js';

export const saveContainerProvider = defineContract({
  method: 'POST',
  summary: 'Deploy the application from a registry image',
  input: z.object({
    containerImage: z.string().nullable(),
    applicationId: Id,
    username: z.string().nullable(),
    password: z.string().nullable(),
    registryUrl: z.string().nullable(),
  }),
  output: ApplicationRecord,
  example: {
    containerImage: 'ghcr.io/acme/shop:1.4.2',
    applicationId: 'app_example',
    username: null,
    password: null,
    registryUrl: null,
  },
});
