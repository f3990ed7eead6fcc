import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { engineReasonOf, pullFailure } from './pull-progress.js';

const lines = (...events: object[]) => events.map((e) => `${JSON.stringify(e)}\r\n`).join('');

describe('pullFailure', () => {
  it('answers null for a pull that ended well, however the stream was cut into chunks', async () => {
    const text = lines({ status: 'Pulling from skiff/web', id: '1' }, { status: 'Digest: sha256:abc' }, { status: 'Status: Downloaded newer image' });
    const chunks = [text.slice(0, 7), text.slice(7, 50), text.slice(50)].map((c) => Buffer.from(c));
    expect(await pullFailure(Readable.from(chunks))).toBeNull();
  });

  it("answers the stream's error, the detail first, the last line without a newline too", async () => {
    const failed = lines({ status: 'Pulling fs layer', id: 'a' }) + JSON.stringify({ errorDetail: { message: 'unauthorized: authentication required' }, error: 'short' });
    expect(await pullFailure(Readable.from([Buffer.from(failed)]))).toBe('unauthorized: authentication required');
    expect(await pullFailure(Readable.from([lines({ error: 'manifest unknown' })]))).toBe('manifest unknown');
  });

  it('keeps multi-byte characters split between chunks and skips lines that are not JSON', async () => {
    const bytes = Buffer.from(lines({ error: 'größe ✓' }));
    const at = bytes.indexOf(Buffer.from('✓')) + 1;
    expect(await pullFailure(Readable.from([Buffer.from('not json\n'), bytes.subarray(0, at), bytes.subarray(at)]))).toBe('größe ✓');
  });
});

describe('engineReasonOf', () => {
  it("takes the engine's part of docker-modem's message, and leaves other messages alone", () => {
    expect(engineReasonOf('(HTTP code 500) server error - unauthorized: authentication required ')).toBe('unauthorized: authentication required');
    expect(engineReasonOf('(HTTP code 404) unexpected - pull access denied for x - no such repo')).toBe('pull access denied for x - no such repo');
    expect(engineReasonOf('socket hang up')).toBe('socket hang up');
  });
});
