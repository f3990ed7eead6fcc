import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { routeFields } from './fields.js';
import { DomainRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a domain',
  description:
    'Fields mean the same as in `domain.create` and are checked the same way against the ' +
    'domain as it will be; fields not given keep their values (a domain keeps its owner). ' +
    '`middlewares` null clears them. Changing `certificateType` away from acme without giving ' +
    '`customCertResolver` clears the resolver. `enabled` false keeps the domain but removes ' +
    'its route.',
  input: z.object({
    ...routeFields,
    domainId: Id,
    enabled: z.boolean().optional(),
  }),
  output: DomainRecord,
  example: { host: 'www.shop.example.com', domainId: 'dom_example', https: true, port: 8080 },
});
