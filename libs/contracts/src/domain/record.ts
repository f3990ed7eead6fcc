import { z } from 'zod';
import { CertificateType, Timestamp } from '../primitives.js';

export const DomainType = z.enum(['application', 'compose', 'preview']);

/**
 * A domain as responses show it: one route from `host` + `path` to a service. Exactly one of
 * `applicationId`, `composeId`, `previewDeploymentId` is set, and `domainType` names which.
 */
export const DomainRecord = z.object({
  domainId: z.string(),
  applicationId: z.string().nullable(),
  composeId: z.string().nullable(),
  previewDeploymentId: z.string().nullable(),
  domainType: DomainType,
  serverId: z
    .string()
    .nullable()
    .describe("the server of the service routed to (copied from the service); null: the platform host"),
  host: z.string().describe('lower-case DNS name (international names in punycode); may start with `*.`'),
  path: z.string().describe('public path prefix, starting with /'),
  port: z.number().int().nullable().describe('the port the service listens on'),
  https: z.boolean(),
  certificateType: CertificateType,
  customEntrypoint: z.string().nullable(),
  customCertResolver: z.string().nullable(),
  serviceName: z.string().nullable().describe('the compose service routed to (compose domains only)'),
  internalPath: z.string().nullable().describe('the path the service receives, starting with /'),
  stripPath: z.boolean(),
  middlewares: z.array(z.string()).nullable(),
  forwardAuthEnabled: z.boolean(),
  enabled: z.boolean().describe('false keeps the record but removes its route'),
  createdAt: Timestamp,
});

export const GeneratedDomain = z.object({
  host: z.string().describe('`<appName>-<6 hex>-<IPv4 with dashes>.sslip.io`; not stored'),
});

export const ProxyMeDomainsAvailability = z.object({
  canGenerate: z.boolean(),
  ipAddress: z.string().nullable().describe('the public IPv4 address generated domains would point to'),
  reason: z.string().nullable().describe('why domains cannot be generated, when they cannot'),
});

export const DomainValidation = z.object({
  valid: z.boolean().describe("the server's address is among the domain's DNS answers"),
  reason: z.string().nullable().describe('why the domain is not valid, when it is not'),
  resolvedIps: z.array(z.string()).describe('the addresses the domain resolves to'),
  serverIp: z.string().nullable().describe('the address the domain should resolve to'),
});
