import { hash, randomBytes } from 'node:crypto';

/** A new API key: `skf_` and 43 base64url characters (256 random bits). */
export function newApiKey(): string {
  return `skf_${randomBytes(32).toString('base64url')}`;
}

/** A new invitation token: `sit_` and 32 base64url characters (invitation ids are `inv_…`). */
export function newInvitationToken(): string {
  return `sit_${randomBytes(24).toString('base64url')}`;
}

/**
 * Keys and tokens are random with 192+ bits of entropy, so a fast hash is enough: nothing
 * to guess by brute force, and the lookup stays cheap on every request.
 */
export function hashToken(token: string): string {
  // One-shot: no Hash object per request.
  return hash('sha256', token, 'hex');
}

/** The part of a key shown in listings so its owner can recognise it. */
export const keyStart = (key: string) => key.slice(0, 10);
