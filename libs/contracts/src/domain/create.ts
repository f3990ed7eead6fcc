import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CertificateType, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Route a host name (and path) to an application, a compose service or a preview',
  description:
    'The domain belongs to `applicationId`, to `composeId` (routing to its service ' +
    '`serviceName` on `port`) or to `previewDeploymentId`; `domainType` says which ' +
    '(`application`, `compose` or `preview`). `path` is the public path prefix, ' +
    '`internalPath` the path the service receives, `stripPath` removes the prefix before ' +
    'forwarding. `middlewares` lists names of middlewares declared in the proxy\'s shared ' +
    'middleware configuration (the dynamic middlewares file), applied in the given order; an ' +
    'unknown name is refused; null or absent applies none. `customEntrypoint` replaces the ' +
    'default web/websecure entrypoints; `customCertResolver` names a resolver other than the ' +
    'default one when `certificateType` is acme. `forwardAuthEnabled` protects the route ' +
    "with the proxy's forward-auth middleware.",
  input: z.object({
    host: NonEmpty,
    path: z.string().nullable().optional(),
    port: z.number().nullable().optional(),
    customEntrypoint: z.string().nullable().optional(),
    https: z.boolean().optional(),
    applicationId: z.string().nullable().optional(),
    certificateType: CertificateType.optional(),
    customCertResolver: z.string().nullable().optional(),
    composeId: z.string().nullable().optional(),
    serviceName: z.string().nullable().optional(),
    domainType: z.string().nullable().optional(),
    previewDeploymentId: z.string().nullable().optional(),
    internalPath: z.string().nullable().optional(),
    stripPath: z.boolean().optional(),
    middlewares: z
      .array(NonEmpty)
      .nullable()
      .optional()
      .describe("names of middlewares declared in the proxy's shared middleware configuration"),
    forwardAuthEnabled: z.boolean().optional(),
  }),
  output: Unspecified,
  example: {
    host: 'shop.example.com',
    path: '/',
    port: 3000,
    https: true,
    applicationId: 'app_example',
    certificateType: 'acme',
    domainType: 'application',
    middlewares: ['redirect-to-https'],
  },
});
