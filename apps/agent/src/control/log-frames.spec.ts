import { describe, expect, it } from 'vitest';
import { LogFrames } from './log-frames.js';

const frame = (stream: 1 | 2, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

describe('LogFrames', () => {
  it('demultiplexes stdout and stderr frames into lines, across split chunks', () => {
    const frames = new LogFrames(false);
    const all = Buffer.concat([frame(1, 'one\ntw'), frame(2, 'oops\n'), frame(1, 'o\n')]);
    const lines = [...frames.push(all.subarray(0, 5)), ...frames.push(all.subarray(5, 20)), ...frames.push(all.subarray(20))];
    expect(lines).toEqual([
      { stderr: false, text: 'one' },
      { stderr: true, text: 'oops' },
      { stderr: false, text: 'two' },
    ]);
  });

  it('reads a TTY log as stdout, keeps a last line without its break for flush, and cuts long lines', () => {
    const frames = new LogFrames(true, 4);
    expect(frames.push(Buffer.from('ab\r\nabcdefg\nrest'))).toEqual([
      { stderr: false, text: 'ab' },
      { stderr: false, text: 'abcd' },
    ]);
    expect(frames.flush()).toEqual([{ stderr: false, text: 'rest' }]);
  });
});
