import { z } from 'zod';
import { CertificateType, NonEmpty } from '../primitives.js';

/** How a domain routes, the same on create and update. */
export const routeFields = {
  host: NonEmpty,
  path: z.string().nullable().optional(),
  port: z.number().nullable().optional(),
  customEntrypoint: z.string().nullable().optional(),
  https: z.boolean().optional(),
  certificateType: CertificateType.optional(),
  customCertResolver: z.string().nullable().optional(),
  serviceName: z.string().nullable().optional(),
  domainType: z.string().nullable().optional(),
  internalPath: z.string().nullable().optional(),
  stripPath: z.boolean().optional(),
  middlewares: z
    .array(NonEmpty)
    .nullable()
    .optional()
    .describe("names of middlewares declared in the proxy's shared middleware configuration"),
  forwardAuthEnabled: z.boolean().optional(),
};
