import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/**
 * A stored TLS certificate as responses show it: the PEM certificate (chain) and what was
 * read from it. The private key is encrypted at rest and never returned.
 */
export const CertificateRecord = z.object({
  certificateId: z.string(),
  organizationId: z.string(),
  serverId: z.string().nullable().describe('the server the proxy serves it on; null: the platform host'),
  name: z.string(),
  certificateData: z.string().describe('the PEM certificate, leaf first, then any intermediates'),
  certificatePath: z.string().describe("the certificate's folder on the proxy host"),
  autoRenew: z.boolean().nullable(),
  subject: z.string().describe('distinguished name of the leaf certificate, one `K=V` per line'),
  issuer: z.string().describe('distinguished name of the issuer, one `K=V` per line'),
  subjectNames: z.array(z.string()).describe('the DNS names it serves: its subjectAltName DNS entries, else its CN'),
  notBefore: Timestamp,
  expiresAt: Timestamp,
  fingerprint: z.string().describe('SHA-256 fingerprint of the leaf certificate (hex pairs with colons)'),
  createdAt: Timestamp,
});
