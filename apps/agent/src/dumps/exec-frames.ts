/**
 * The output of a docker exec without a TTY: frames of an 8-byte header (stream 1 stdout, 2
 * stderr; big-endian length at 4) and their payload. This transform passes the stdout
 * payloads on and keeps the end of stderr, respecting backpressure (docker-modem's
 * demuxStream writes regardless of it, which would buffer a whole dump in memory).
 */
import { Transform, type TransformCallback } from 'node:stream';

const HEADER = 8;
const STDERR_KEPT = 4096;

export class ExecFrames extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private stderr = '';

  /** The last characters the tool wrote to stderr. */
  get stderrTail(): string {
    return this.stderr.trim();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (data.length >= HEADER) {
      const length = data.readUInt32BE(4);
      if (data.length < HEADER + length) break;
      const payload = data.subarray(HEADER, HEADER + length);
      if (data[0] === 2) this.stderr = (this.stderr + payload.toString('utf8')).slice(-STDERR_KEPT);
      else if (payload.length) this.push(payload);
      data = data.subarray(HEADER + length);
    }
    this.pending = Buffer.from(data);
    done();
  }
}
