import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';
import { routeFields } from './fields.js';

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
    ...routeFields,
    applicationId: z.string().nullable().optional(),
    composeId: z.string().nullable().optional(),
    previewDeploymentId: z.string().nullable().optional(),
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
