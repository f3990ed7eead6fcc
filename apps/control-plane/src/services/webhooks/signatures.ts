import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type ForgeSource = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

/** Equal strings, in time that does not depend on where they differ (both sides hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const hmacHex = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');

/** The header each forge signs (or authenticates) a delivery with. */
export const SIGNATURE_HEADER: Record<ForgeSource, string> = {
  github: 'x-hub-signature-256',
  gitlab: 'x-gitlab-token',
  bitbucket: 'x-hub-signature',
  gitea: 'x-gitea-signature',
};

/**
 * Whether `header` authenticates `body` with `secret`, by the forge's scheme:
 * GitHub `sha256=<hex HMAC-SHA256 of the body>`; Bitbucket the same in `X-Hub-Signature`;
 * Gitea the bare hex HMAC-SHA256; GitLab sends the secret itself in `X-Gitlab-Token`.
 */
export function verifySignature(source: ForgeSource, secret: string, body: string, header: string | undefined): boolean {
  if (!header || !secret) return false;
  switch (source) {
    case 'github':
    case 'bitbucket':
      return sameSecret(header.trim().toLowerCase(), `sha256=${hmacHex(secret, body)}`);
    case 'gitea':
      return sameSecret(header.trim().toLowerCase(), hmacHex(secret, body));
    case 'gitlab':
      return sameSecret(header, secret);
  }
}

/** The header a forge signs with, as a test (or a sender) computes it. */
export function signatureFor(source: ForgeSource, secret: string, body: string): string {
  switch (source) {
    case 'github':
    case 'bitbucket':
      return `sha256=${hmacHex(secret, body)}`;
    case 'gitea':
      return hmacHex(secret, body);
    case 'gitlab':
      return secret;
  }
}
