// A tool that does not exit (docker exec's process outlives its closed connection: a restore
// waiting on a lock once its input is read, a dump waiting on one after its output) does not
// hold its command once the command is cancelled or its deadline passes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { S3Object } from '@skiff/proto';
import S3rver from 's3rver';
import { describe, expect, it } from 'vitest';
import type { ToolRun } from './database-containers.js';
import { archiveToolOutput, feedTool } from './tool-archives.js';

/** A tool whose input is read and output ended, and that never exits. */
function stuckTool(): ToolRun & { cancelled: () => boolean } {
  const input = new PassThrough();
  input.resume();
  let cancelled = false;
  return {
    output: Readable.from([]),
    input,
    exited: () => new Promise<void>(() => undefined),
    cancel: () => {
      cancelled = true;
      input.destroy();
    },
    cancelled: () => cancelled,
  };
}

describe('a tool that never exits', () => {
  it('is given up when the restore or verification is cancelled, its input fully read', { timeout: 10_000 }, async () => {
    const tool = stuckTool();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(feedTool(tool, Readable.from([gzipSync('SELECT 1;\n')]), controller.signal)).rejects.toThrow();
    expect(tool.cancelled()).toBe(true);
  });

  it('is given up when the dump is cancelled, its output ended and stored', { timeout: 10_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-stuck-'));
    const server = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true, configureBuckets: [{ name: 'stuck' }] });
    const { port } = await server.run();
    try {
      const tool = stuckTool();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      const object: S3Object = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', bucket: 'stuck', key: 'k.sql.gz', accessKey: 'S3RVER', secretKey: 'S3RVER', passphrase: '' };
      await expect(archiveToolOutput(tool, object, controller.signal)).rejects.toThrow();
      expect(tool.cancelled()).toBe(true);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
