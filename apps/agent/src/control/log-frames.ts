/**
 * Splits the engine's log output into lines. Without a TTY the output is multiplexed: frames
 * of an 8-byte header (byte 0: 1 stdout, 2 stderr; bytes 4-7: the payload's length, big
 * endian) and the payload; with a TTY it is the raw terminal output, all stdout. A line
 * longer than `maxLineBytes` is cut there; partial lines wait for the rest.
 */
export interface FramedLine {
  stderr: boolean;
  text: string;
}

export class LogFrames {
  private pending: Buffer = Buffer.alloc(0);
  private partial: Record<'out' | 'err', string> = { out: '', err: '' };

  constructor(private readonly tty: boolean, private readonly maxLineBytes = 16 * 1024) {}

  push(chunk: Buffer): FramedLine[] {
    if (this.tty) return this.text(false, chunk.toString('utf8'));
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const lines: FramedLine[] = [];
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const stderr = this.pending[0] === 2;
      lines.push(...this.text(stderr, this.pending.subarray(8, 8 + size).toString('utf8')));
      this.pending = this.pending.subarray(8 + size);
    }
    return lines;
  }

  /** What is left without its line break, at the end of the log. */
  flush(): FramedLine[] {
    const lines: FramedLine[] = [];
    for (const [key, stderr] of [['out', false], ['err', true]] as const) {
      if (this.partial[key] !== '') lines.push({ stderr, text: this.partial[key] });
      this.partial[key] = '';
    }
    return lines;
  }

  private text(stderr: boolean, text: string): FramedLine[] {
    const key = stderr ? 'err' : 'out';
    const parts = (this.partial[key] + text).split('\n');
    this.partial[key] = parts.pop() ?? '';
    const lines = parts.map((line) => ({ stderr, text: cut(line.replace(/\r$/, ''), this.maxLineBytes) }));
    if (Buffer.byteLength(this.partial[key]) > this.maxLineBytes) {
      lines.push({ stderr, text: cut(this.partial[key], this.maxLineBytes) });
      this.partial[key] = '';
    }
    return lines;
  }
}

function cut(line: string, max: number): string {
  return Buffer.byteLength(line) <= max ? line : Buffer.from(line).subarray(0, max).toString('utf8');
}
