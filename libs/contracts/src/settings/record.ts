import { z } from 'zod';
import { CertificateType, Timestamp } from '../primitives.js';

/**
 * The host settings: one record for the whole platform host, shared by every organization on
 * it (`settings.get`, and the answer of every settings write). The SSH private key is stored
 * encrypted and never returned: `hasSSHPrivateKey` says whether one is set, and its public half
 * is shown so it can be added to `authorized_keys` where the host connects.
 */
export const HostSettingsRecord = z.object({
  host: z
    .string()
    .nullable()
    .describe("The platform dashboard's own domain (settings.assignDomainServer); null until one is assigned"),
  certificateType: CertificateType.describe(
    'How that domain gets its certificate: `acme` issued by the proxy, `custom` a stored certificate (certificates.create), `none` no certificate',
  ),
  letsEncryptEmail: z.string().nullable().describe('The ACME account address used for `acme` certificates'),
  https: z.boolean().describe('The domain is served over HTTPS (plain HTTP redirects to it)'),
  enableContainerCleanup: z
    .boolean()
    .describe('The scheduled daily cleanup of unused images, stopped containers and build cache (never volumes) is on'),
  hasSSHPrivateKey: z.boolean().describe('An SSH private key is stored for the host (settings.saveSSHPrivateKey)'),
  sshPublicKey: z
    .string()
    .nullable()
    .describe('The public half of that key as an authorized_keys line; null when none is stored'),
  sshKeyFingerprint: z.string().nullable().describe('Its SHA256 fingerprint as `ssh-keygen -l` shows it'),
  publicIp: z
    .string()
    .nullable()
    .describe('The public IP address of the platform host (configuration `publicIp`, SKIFF_PUBLIC_IP); null when not configured'),
  updatedAt: Timestamp.nullable().describe('When a host setting last changed; null if never'),
});
