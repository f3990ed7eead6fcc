import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CertificateType, Id, NonEmpty, Unspecified } from '../primitives.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a domain',
  description:
    'Fields mean the same as in `domain.create`. `middlewares` lists names of middlewares ' +
    "declared in the proxy's shared middleware configuration, applied in order; null clears " +
    'them. `enabled` false keeps the domain but removes its route.',
  input: z.object({
    host: NonEmpty,
    domainId: Id,
    path: z.string().nullable().optional(),
    customEntrypoint: z.string().nullable().optional(),
    customCertResolver: z.string().nullable().optional(),
    serviceName: z.string().nullable().optional(),
    domainType: z.string().nullable().optional(),
    internalPath: z.string().nullable().optional(),
    port: z.number().nullable().optional(),
    https: z.boolean().optional(),
    certificateType: CertificateType.optional(),
    stripPath: z.boolean().optional(),
    middlewares: z
      .array(NonEmpty)
      .nullable()
      .optional()
      .describe("names of middlewares declared in the proxy's shared middleware configuration"),
    forwardAuthEnabled: z.boolean().optional(),
    enabled: z.boolean().optional(),
  }),
  output: Unspecified,
  example: { host: 'www.shop.example.com', domainId: 'dom_example', https: true, port: 8080 },
});
