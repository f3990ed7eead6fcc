import { z } from 'zod';
import { defineContract } from '../contract.js';
import { routeFields } from './fields.js';
import { DomainRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Route a host name (and path) to an application, a compose service or a preview',
  description:
    'The domain belongs to exactly one of `applicationId`, `composeId` (routing to its service ' +
    '`serviceName` on `port`, both required) or `previewDeploymentId`; `domainType` follows ' +
    '(`application`, `compose` or `preview`) and, when given, must match. The domain takes the ' +
    "server of its service (a preview: its application's). One `host` + `path` is unique per " +
    'server, and on a server a host belongs to one organization (or, on the platform host, to ' +
    "the platform's own domain): a host another organization routes there, a wildcard covering " +
    "it or a host covered by another organization's wildcard is refused (BAD_REQUEST, `host`). " +
    '`path` is the public path prefix (default /), `internalPath` the path the service ' +
    'receives (default /), `stripPath` removes the prefix before forwarding. `port` defaults to ' +
    '3000 for applications and previews. `middlewares` lists names of middlewares declared in ' +
    "the proxy's shared middleware configuration, applied in the given order, each once; null " +
    'or absent applies none. `customEntrypoint` replaces the default web/websecure entrypoints. ' +
    '`certificateType` (default none): `acme` has the proxy obtain a certificate ' +
    '(`customCertResolver` names a resolver other than the default one), `custom` serves a ' +
    'stored certificate (certificates.create) that covers the host on the same server; both ' +
    'need `https` (implied when absent). `forwardAuthEnabled` protects the route with the ' +
    "proxy's forward-auth middleware. Access follows access to the service.",
  input: z.object({
    ...routeFields,
    applicationId: z.string().nullable().optional(),
    composeId: z.string().nullable().optional(),
    previewDeploymentId: z.string().nullable().optional(),
  }),
  output: DomainRecord,
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
