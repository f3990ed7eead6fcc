import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CertificateType, Email } from '../primitives.js';
import { HostSettingsRecord } from './record.js';

export const assignDomainServer = defineContract({
  method: 'POST',
  summary: 'Serve the platform dashboard on a domain of its own',
  description:
    "Records the domain and queues the platform host's proxy configuration with it: the proxy " +
    'routes the whole host to the control plane (`SKIFF_PLATFORM_UPSTREAM`, default ' +
    '`host.docker.internal:<SKIFF_PORT>`), after the handlers of `platform.json` ' +
    '(settings.updateWebServerProxyConfig). What the proxy cannot serve is refused before anything ' +
    'is recorded. ' +
    '`host` is a single host name (no scheme, port, path or wildcard, not an IP address), ' +
    'stored lower-case and in ASCII form, and must not already route to a service on the ' +
    'platform host. An empty `host` takes the platform domain back (the proxy stops routing it; ' +
    'the other host settings are kept). Optional fields: `letsEncryptEmail` (email), ' +
    'the ACME account address, required with `certificateType: acme` unless one is already ' +
    'stored (omitted: the stored address is kept); `https` (boolean, default true unless ' +
    '`certificateType` is `none`) serves the domain over HTTPS and redirects plain HTTP to it; ' +
    '`acme` and `custom` need HTTPS. `custom` needs a stored certificate of the caller\'s ' +
    'organization on the platform host (certificates.create) that covers `host` (the proxy ' +
    'serves the stored platform-host certificate covering it, an exact name before a wildcard). Each failure ' +
    'is a BAD_REQUEST naming its field. Host settings affect every organization on this host: ' +
    'besides the admin role, the caller must be a platform administrator (the user created at ' +
    'first boot), FORBIDDEN otherwise. Answers the host settings, with `warnings`: what keeps ' +
    'the proxy from reaching the control plane as it runs (it listens on loopback only, `SKIFF_HOST` ' +
    '127.0.0.1: restart it with `SKIFF_HOST=0.0.0.0`).',
  input: z.object({
    host: z.string().describe('The domain; empty to take the platform domain back'),
    certificateType: CertificateType,
    letsEncryptEmail: Email.optional(),
    https: z.boolean().optional(),
  }),
  output: HostSettingsRecord.extend({
    warnings: z
      .array(z.string())
      .describe('Why the domain may not answer yet, e.g. the control plane listens on loopback only (SKIFF_HOST); empty when nothing is known to be wrong'),
  }),
  access: { role: 'admin' },
  example: {
    host: 'skiff.example.com',
    certificateType: 'acme',
    letsEncryptEmail: 'admin@example.com',
    https: true,
  },
});
