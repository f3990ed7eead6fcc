// What a backup, restore or verification says when the bucket's side fails, against an
// S3-compatible server in this process: the server stopped in the middle of an upload, a
// bucket that does not exist, a wrong access key. The reason names the request (which part of
// which file), the bucket and the endpoint's host, and the connection's error or S3's code;
// never the keys. The tool is a stream of random bytes standing in for a dump tool's output.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Object } from '@skiff/proto';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolRun } from './database-containers.js';
import { PART_BYTES } from './s3-object.js';
import { archiveToolOutput, openArchive } from './tool-archives.js';
import { startTestS3, type TestS3 } from '../testing/test-s3.js';

const BUCKET = 'outages';
const started: TestS3[] = [];

async function startS3(): Promise<TestS3> {
  const s3 = await startTestS3(BUCKET);
  started.push(s3);
  return s3;
}

afterEach(async () => {
  for (const s3 of started.splice(0)) await s3.stop();
});

const object = (s3: TestS3, fields: Partial<S3Object> = {}) => s3.object('db/outage.sql.gz', fields);

/** A tool writing `total` random bytes; once `pause.at` bytes are out, it waits for `pause.until`. */
function tool(total: number, pause?: { at: number; until: () => Promise<void> }): ToolRun {
  let sent = 0;
  let paused = false;
  const next = () => {
    if (sent >= total) return null;
    const bytes = randomBytes(Math.min(64 * 1024, total - sent));
    sent += bytes.length;
    return bytes;
  };
  const output = new Readable({
    read() {
      if (pause && !paused && sent >= pause.at) {
        paused = true;
        void pause.until().then(() => this.push(next()));
        return;
      }
      this.push(next());
    },
  });
  let exit: () => void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  output.once('end', () => exit());
  return { output, input: null, exited: () => exited, cancel: () => (output.destroy(), exit()) };
}

describe('a bucket that fails under a backup', () => {
  it('names the part, the bucket, the host and the refused connection when the server stops mid-upload', { timeout: 120_000 }, async () => {
    const s3 = await startS3();
    let stopped = false;
    // Random bytes do not compress: past two parts' worth, the first part is stored.
    const run = tool(6 * PART_BYTES, {
      at: 2 * PART_BYTES,
      until: async () => {
        await s3.stop();
        stopped = true;
      },
    });
    const reason = await archiveToolOutput(run, object(s3), new AbortController().signal);
    expect(stopped).toBe(true);
    expect(reason).toMatch(new RegExp(`^uploading part \\d+ of db/outage\\.sql\\.gz to bucket ${BUCKET} at 127\\.0\\.0\\.1:${s3.port}: connection refused \\(ECONNREFUSED\\)$`));
  });

  it('gives S3’s error code for a bucket that does not exist and for a wrong access key, without the key', { timeout: 60_000 }, async () => {
    const s3 = await startS3();
    const noBucket = await archiveToolOutput(tool(1000), object(s3, { bucket: 'no-such-bucket' }), new AbortController().signal);
    expect(noBucket).toMatch(new RegExp(`^uploading db/outage\\.sql\\.gz to bucket no-such-bucket at 127\\.0\\.0\\.1:${s3.port}: the S3 server answered 404 NoSuchBucket`));
    // s3rver checks the access key (not a v4 signature, so not the secret key).
    const wrongKey = 'NOT-AN-ACCESS-KEY-OF-S3RVER';
    const refused = await archiveToolOutput(tool(2 * PART_BYTES), object(s3, { accessKey: wrongKey }), new AbortController().signal);
    expect(refused).toMatch(/^starting the upload of db\/outage\.sql\.gz to bucket outages at 127\.0\.0\.1:\d+: the S3 server answered 403 InvalidAccessKeyId: /);
    expect(refused).not.toContain(wrongKey);
  });

  it('answers without waiting for a tool that the closed connection does not end (a dump waiting on a lock)', { timeout: 30_000 }, async () => {
    const s3 = await startS3();
    // A part's worth of output, then nothing, and no exit: docker exec's process lives on when its connection closes.
    const output = new Readable({ read() {} });
    output.push(randomBytes(PART_BYTES + 1024));
    const stuck: ToolRun = { output, input: null, exited: () => new Promise<void>(() => undefined), cancel: () => output.destroy() };
    const reason = await archiveToolOutput(stuck, object(s3, { bucket: 'no-such-bucket' }), new AbortController().signal);
    expect(reason).toMatch(new RegExp(`^starting the upload of db/outage\\.sql\\.gz to bucket no-such-bucket at 127\\.0\\.0\\.1:${s3.port}: the S3 server answered 404 NoSuchBucket`));
  });

  it('names the download and S3’s code for a restore or verification whose file is missing', { timeout: 60_000 }, async () => {
    const s3 = await startS3();
    await expect(openArchive(object(s3, { key: 'db/none.sql.gz' }))).rejects.toThrow(
      new RegExp(`^downloading db/none\\.sql\\.gz from bucket ${BUCKET} at 127\\.0\\.0\\.1:${s3.port}: the S3 server answered 404 NoSuchKey`),
    );
  });

  it('names the download and the refused connection when the server is down', { timeout: 60_000 }, async () => {
    const s3 = await startS3();
    await s3.stop();
    await expect(openArchive(object(s3))).rejects.toThrow(
      `downloading db/outage.sql.gz from bucket ${BUCKET} at 127.0.0.1:${s3.port}: connection refused (ECONNREFUSED)`,
    );
  });
});
