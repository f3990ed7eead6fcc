import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/**
 * An SSH key pair for git over SSH (`customGitSSHKeyId`). The private key is stored encrypted
 * and never returned.
 */
export const SshKeyRecord = z.object({
  sshKeyId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  publicKey: z.string().describe('OpenSSH authorized_keys line (`ssh-ed25519 AAAA… comment`): add it as a deploy key on the forge'),
  keyType: z.string().describe('ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256/384/521'),
  fingerprint: z.string().describe('SHA256 fingerprint as `ssh-keygen -l` shows it'),
  createdAt: Timestamp,
});
