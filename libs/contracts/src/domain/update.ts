import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';
import { routeFields } from './fields.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a domain',
  description:
    'Fields mean the same as in `domain.create`. `middlewares` lists names of middlewares ' +
    "declared in the proxy's shared middleware configuration, applied in order; null clears " +
    'them. `enabled` false keeps the domain but removes its route.',
  input: z.object({
    ...routeFields,
    domainId: Id,
    enabled: z.boolean().optional(),
  }),
  output: Unspecified,
  example: { host: 'www.shop.example.com', domainId: 'dom_example', https: true, port: 8080 },
});
