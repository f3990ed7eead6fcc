import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Upload } from '@skiff/contracts';
import busboy from 'busboy';
import { DomainError, Invalid } from '../errors.js';
import type { UploadedFile } from '../services/deployments/index.js';

/** Where uploaded files are written while a request runs, and how large one may be. */
export interface UploadLimits {
  /** A directory on the same filesystem as where services keep files (so they can rename). */
  dir: string;
  maxBytes: number;
}

export interface MultipartBody {
  fields: Record<string, string>;
  file: UploadedFile | null;
}

const HEAD_BYTES = 512;
/** Room for the text parts and multipart framing on top of the file itself. */
const FRAMING_BYTES = 1024 * 1024;

/**
 * Reads a `multipart/form-data` body: text parts become fields, the part named
 * `upload.field` is streamed to a new file in `limits.dir` while it is hashed and counted.
 * Past `limits.maxBytes` the request is refused (BAD_REQUEST naming the field) and the
 * partial file removed; so is a body whose bytes, all counted as they arrive (chunked or
 * not), go past `limits.maxBytes` plus the framing allowance. Reading stops there. Nothing is
 * held in memory beyond one chunk and the text fields.
 */
export async function readMultipart(request: Request, upload: Upload, limits: UploadLimits): Promise<MultipartBody> {
  const tooLarge = () => Invalid(upload.field, `the file is larger than ${limits.maxBytes} bytes`);
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limits.maxBytes + FRAMING_BYTES) throw tooLarge();
  if (!request.body) throw Invalid(upload.field, 'required: the request has no body');

  await mkdir(limits.dir, { recursive: true, mode: 0o700 });
  const path = join(limits.dir, `upload-${randomBytes(12).toString('hex')}`);
  const fields: Record<string, string> = {};
  let file: UploadedFile | null = null;
  let writing: Promise<void> | null = null;
  const source = Readable.fromWeb(request.body as WebReadableStream<Uint8Array>);

  const parsed = new Promise<void>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': request.headers.get('content-type') ?? '' },
        limits: { files: 1, fields: 20, parts: 30, fieldSize: 64 * 1024, fieldNameSize: 100, fileSize: limits.maxBytes + 1 },
      });
    } catch {
      reject(new DomainError('BAD_REQUEST', 'The multipart body cannot be read', [{ path: [], message: 'not multipart/form-data' }]));
      return;
    }
    const fail = (err: unknown) => {
      source.unpipe(parser);
      source.destroy();
      reject(err);
    };
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) return fail(Invalid(name, 'the text part is too long'));
      fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      if (name !== upload.field || writing) {
        stream.resume();
        return fail(Invalid(name, `unexpected file part (only one, named ${upload.field})`));
      }
      writing = receive(stream, path, limits.maxBytes).then(
        (received) => {
          file = received;
        },
        (err: unknown) => {
          fail(err === TOO_LARGE ? tooLarge() : err);
          throw err;
        },
      );
      writing.catch(() => {});
    });
    for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parser.on(event, () => fail(Invalid(upload.field, 'too many parts in the form')));
    }
    parser.on('error', () =>
      fail(new DomainError('BAD_REQUEST', 'The multipart body cannot be read', [{ path: [], message: 'malformed multipart/form-data' }])),
    );
    parser.on('close', () => {
      if (!writing) return resolve();
      writing.then(resolve, () => {});
    });
    // Everything that arrives counts (framing, preamble, epilogue, parts busboy skips), not
    // only the file: past the limit reading stops, whatever part the bytes belong to.
    let total = 0;
    source.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limits.maxBytes + FRAMING_BYTES) fail(tooLarge());
    });
    source.on('error', (err) => fail(err));
    source.pipe(parser);
  });

  try {
    await parsed;
  } catch (err) {
    await (writing as Promise<void> | null)?.catch(() => {});
    await rm(path, { force: true });
    throw err;
  }
  return { fields, file };
}

const TOO_LARGE = new Error('upload too large');

/** Streams one file part to `path` (0600, created new), counting and hashing it. */
async function receive(stream: Readable, path: string, maxBytes: number): Promise<UploadedFile> {
  const hash = createHash('sha256');
  let size = 0;
  const heads: Buffer[] = [];
  let headBytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(TOO_LARGE);
      hash.update(chunk);
      if (headBytes < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headBytes);
        heads.push(part);
        headBytes += part.length;
      }
      done(null, chunk);
    },
  });
  await pipeline(stream, meter, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  return { path, size, sha256: hash.digest('hex'), head: Buffer.concat(heads) };
}
