import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random text ids: a short prefix naming the kind, then 16 base-36 characters. */
export type IdGenerator = (prefix: string) => string;

export const randomIds: IdGenerator = (prefix) => {
  const bytes = randomBytes(16);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % 36];
  return `${prefix}_${s}`;
};
