/**
 * A platform backup's dump file as text bytes, read as a stream: `<time>.sql`, `<time>.sql.gz`
 * or `<time>.sql.gz.age` (told apart by their first bytes, not their names), gunzipped and
 * decrypted as they are read, so no step holds the whole dump.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { decrypted } from '@skiff/archives/age';

const AGE_HEADER = Buffer.from('age-encryption.org/v1\n');
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

export async function dumpFileText(path: string, passphrase: () => Promise<string>): Promise<AsyncIterable<Uint8Array>> {
  const file = await open(path);
  let head: Buffer;
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(AGE_HEADER.length), 0, AGE_HEADER.length, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  if (head.equals(AGE_HEADER)) return gunzippedIfGzip(await decrypted(createReadStream(path), await passphrase()));
  return gunzippedIfGzip(createReadStream(path));
}

/** The bytes, gunzipped when they start as gzip does. */
async function* gunzippedIfGzip(source: Readable): AsyncGenerator<Uint8Array> {
  const pieces = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await pieces.next();
  if (first.done) return;
  const all = (async function* () {
    yield first.value;
    for (let next = await pieces.next(); !next.done; next = await pieces.next()) yield next.value;
  })();
  if (first.value.subarray(0, 2).equals(GZIP_MAGIC)) {
    const gunzip = createGunzip();
    // Its failure (a corrupt or cut-short file) reaches the reader through gunzip.
    pipeline(Readable.from(all), gunzip).catch(() => undefined);
    yield* gunzip;
  } else yield* all;
}

/** The passphrase, typed without echo on a terminal, else the first line of stdin. */
export async function readPassphrase(): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    let text = '';
    for await (const piece of input) {
      text += String(piece);
      if (text.includes('\n')) break;
    }
    return text.split(/\r?\n/)[0]!;
  }
  process.stderr.write('passphrase of the encrypted dump: ');
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = () => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
    };
    const onData = (keys: string) => {
      for (const key of keys) {
        if (key === '\r' || key === '\n') {
          done();
          resolve(typed);
          return;
        }
        if (key === '\u0003') {
          done();
          reject(new Error('interrupted'));
          return;
        }
        typed = key === '\u007f' || key === '\b' ? typed.slice(0, -1) : typed + key;
      }
    };
    input.on('data', onData);
  });
}
