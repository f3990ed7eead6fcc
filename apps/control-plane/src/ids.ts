import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const ID_BYTES = 16;

/** Random text ids: a short prefix naming the kind, then 16 base-36 characters. */
export type IdGenerator = (prefix: string) => string;

/**
 * Ids from random bytes drawn a block at a time: each draw is a call into OpenSSL with its own
 * fork check (a getpid system call), which cost more than the id. A block serves 256 ids.
 */
export function randomIdGenerator(blockBytes = 256 * ID_BYTES): IdGenerator {
  const block = Buffer.alloc(blockBytes);
  let offset = blockBytes;
  return (prefix) => {
    if (offset + ID_BYTES > blockBytes) {
      randomFillSync(block);
      offset = 0;
    }
    let s = '';
    for (let i = offset; i < offset + ID_BYTES; i++) s += ALPHABET[block[i]! % 36];
    offset += ID_BYTES;
    return `${prefix}_${s}`;
  };
}

export const randomIds: IdGenerator = randomIdGenerator();
