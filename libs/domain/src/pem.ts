/** One `-----BEGIN <label>-----` … `-----END <label>-----` block of a PEM text. */
export interface PemBlock {
  label: string;
  text: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The PEM blocks of a text, in order; text between blocks (comments, bag attributes) is skipped. */
export function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(BLOCK)].map((m) => ({ label: m[1]!, text: `${m[0]}\n` }));
}

/** Labels of PEM blocks holding a private key (PKCS#8, encrypted PKCS#8, PKCS#1, SEC1, OpenSSH). */
export const isPrivateKeyLabel = (label: string) => label.endsWith('PRIVATE KEY');
