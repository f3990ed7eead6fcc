// The chunked body decoder and the newest-line keeper of the raw stats stream (stats-socket.ts),
// fed the way the engine's writes arrive: frames split anywhere, a line split across chunks,
// many lines in one read.
import { describe, expect, it } from 'vitest';
import { ChunkedBody, NewestLine } from './stats-socket.js';

const frame = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const bodyOf = (decoder: ChunkedBody, raw: string) => Buffer.concat(decoder.push(Buffer.from(raw))).toString();

describe('ChunkedBody', () => {
  it('decodes chunks split at every byte', () => {
    const raw = frame('{"a":1}\n') + frame('{"b":') + frame('2}\n') + '0\r\n\r\n';
    const decoder = new ChunkedBody();
    let body = '';
    for (const ch of raw) body += bodyOf(decoder, ch);
    expect(body).toBe('{"a":1}\n{"b":2}\n');
    expect(decoder.done).toBe(true);
  });

  it('refuses a malformed size line', () => {
    expect(() => new ChunkedBody().push(Buffer.from('zz\r\nabc\r\n'))).toThrow('malformed chunk size');
    expect(() => new ChunkedBody().push(Buffer.from('1'.repeat(2000)))).toThrow('too long');
  });
});

describe('NewestLine', () => {
  it('answers the newest complete line of what arrived, keeping a partial one for later', () => {
    const lines = new NewestLine();
    expect(lines.push([Buffer.from('{"n":1}\n{"n":2}\n{"n":')])?.toString()).toBe('{"n":2}');
    expect(lines.push([Buffer.from('3')])).toBeNull();
    expect(lines.push([Buffer.from('}\n')])?.toString()).toBe('{"n":3}');
    expect(lines.push([])).toBeNull();
  });
});
