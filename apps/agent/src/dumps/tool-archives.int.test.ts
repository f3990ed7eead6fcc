// A tool that does not exit (docker exec's process outlives its closed connection: a restore
// waiting on a lock once its input is read, a dump waiting on one after its output) does not
// hold its command once the command is cancelled or its deadline passes.
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ToolRun } from './database-containers.js';
import { archiveToolOutput, feedTool } from './tool-archives.js';
import { startTestS3 } from '../testing/test-s3.js';

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
    const s3 = await startTestS3('stuck');
    try {
      const tool = stuckTool();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      await expect(archiveToolOutput(tool, s3.object('k.sql.gz'), controller.signal)).rejects.toThrow();
      expect(tool.cancelled()).toBe(true);
    } finally {
      await s3.stop();
    }
  });
});
