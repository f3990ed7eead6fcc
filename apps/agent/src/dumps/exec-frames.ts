/**
 * The output of a docker exec without a TTY: frames of an 8-byte header (stream 1 stdout, 2
 * stderr; big-endian length at 4) and their payload. This transform passes the stdout
 * payloads on and keeps the end of stderr, respecting backpressure (docker-modem's
 * demuxStream writes regardless of it, which would buffer a whole dump in memory).
 * A payload is passed on as slices of the chunks it arrived in, also when it spans several:
 * nothing of a dump is copied here (a copy of each chunk was garbage for the collector).
 */
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';

const HEADER = 8;
const STDERR_KEPT = 4096;
const STDERR = 2;

export class ExecFrames extends Transform {
  /** The header being read: its bytes arrive in one chunk or several. */
  private readonly header = Buffer.alloc(HEADER);
  private headerFilled = 0;
  /** The current frame's stream, and the bytes of its payload still to come. */
  private stream = 0;
  private remaining = 0;
  private readonly decoder = new StringDecoder('utf8');
  private stderr = '';

  /** The last characters the tool wrote to stderr. */
  get stderrTail(): string {
    return this.stderr.trim();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining === 0) {
        const n = chunk.copy(this.header, this.headerFilled, offset, offset + HEADER - this.headerFilled);
        this.headerFilled += n;
        offset += n;
        if (this.headerFilled < HEADER) break;
        this.headerFilled = 0;
        this.stream = this.header[0]!;
        this.remaining = this.header.readUInt32BE(4);
        continue;
      }
      const end = Math.min(chunk.length, offset + this.remaining);
      const payload = chunk.subarray(offset, end);
      this.remaining -= payload.length;
      offset = end;
      if (this.stream === STDERR) this.stderr = (this.stderr + this.decoder.write(payload)).slice(-STDERR_KEPT);
      else this.push(payload);
    }
    done();
  }
}
