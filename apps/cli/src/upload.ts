import { openAsBlob, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Upload } from '@skiff/contracts';
import { usage } from './errors.js';

/** The server's default for `SKIFF_MAX_ARCHIVE_BYTES` (apps/control-plane/src/config.ts). */
export const DEFAULT_MAX_UPLOAD_BYTES = 256 * 1024 * 1024;

/** The largest file the CLI sends: `SKIFF_MAX_ARCHIVE_BYTES` when set (as the server reads it), else the server's default. */
export function uploadLimit(env: NodeJS.ProcessEnv): number {
  const text = env.SKIFF_MAX_ARCHIVE_BYTES?.trim();
  if (!text) return DEFAULT_MAX_UPLOAD_BYTES;
  if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(Number(text))) throw usage(`SKIFF_MAX_ARCHIVE_BYTES is not a positive whole number of bytes: ${text}`);
  return Number(text);
}

export interface UploadFile {
  field: string;
  name: string;
  blob: Blob;
}

/** The file given with `--file`, checked (a regular file, within the limit) before anything is sent; read lazily as it is sent. */
export async function uploadFile(upload: Upload, path: string | undefined, limit: number): Promise<UploadFile> {
  if (!path) throw usage(`${upload.field}: required: give the file with --file <path> (${upload.description})`);
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw usage(`${upload.field}: ${path} is not a regular file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof Error && 'code' in err && typeof err.code === 'string') throw usage(`${upload.field}: cannot read ${path} (${err.code})`);
    throw err;
  }
  if (size > limit) throw usage(`${upload.field}: ${path} is ${size} bytes, larger than the limit of ${limit} bytes (SKIFF_MAX_ARCHIVE_BYTES); nothing was sent`);
  return { field: upload.field, name: basename(path), blob: await openAsBlob(path) };
}

/** The multipart body the API reads for an upload: one text part per input field, then the file part. */
export function multipartBody(input: Record<string, unknown>, file: UploadFile): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  form.append(file.field, file.blob, file.name);
  return form;
}
