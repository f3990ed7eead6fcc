import { z } from 'zod';
import { CertificateType, NonEmpty } from '../primitives.js';
import { DomainType } from './record.js';

/** How a domain routes, the same on create and update. */
export const routeFields = {
  host: NonEmpty.describe(
    'a DNS name (lower-cased when stored; international names become punycode); no scheme, port ' +
      'or path; a wildcard only as a leading `*.`. One host + path is unique per server.',
  ),
  path: z.string().nullable().optional().describe('public path prefix, starting with / (default /)'),
  port: z.number().int().min(1).max(65535).nullable().optional()
    .describe('the port the service listens on; required for compose domains, default 3000 otherwise'),
  customEntrypoint: z.string().nullable().optional().describe('a proxy entrypoint name (letters, digits, . _ -)'),
  https: z.boolean().optional(),
  certificateType: CertificateType.optional()
    .describe('default none; acme and custom need https; custom needs a stored certificate (certificates.create) covering the host on the same server'),
  customCertResolver: z.string().nullable().optional().describe('a resolver name, only with certificateType acme'),
  serviceName: z
    .string()
    .nullable()
    .optional()
    .describe(
      "the compose service routed to; compose domains only, required there. The proxy dials the service's alias " +
        '`<service>.<appName>` on the platform network, which the service gets when the stack deploys: redeploy the ' +
        'stack after routing a new service',
    ),
  domainType: DomainType.nullable().optional().describe('follows from the owner; when given it must match'),
  internalPath: z.string().nullable().optional().describe('the path the service receives, starting with / (default /)'),
  stripPath: z.boolean().optional(),
  middlewares: z
    .array(NonEmpty)
    .nullable()
    .optional()
    .describe("names of middlewares declared in the proxy's shared middleware configuration"),
  forwardAuthEnabled: z.boolean().optional(),
};
