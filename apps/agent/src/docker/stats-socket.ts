/**
 * One container's streaming stats call on the engine's unix socket, read without Node's HTTP
 * client so that the socket itself can rest: while paused, nothing is read (no wake-up, no
 * parsing) and the engine's lines wait in the socket's buffer (about 2 KiB a second); on
 * resume they arrive in one read, of which only the newest complete line is kept. Reads land
 * in one buffer shared by the streams (`onread`), so they allocate nothing.
 */
import { connect, type Socket } from 'node:net';

const HEAD_LIMIT = 16 * 1024;
const LINE_LIMIT = 1024 * 1024;

/** Decodes an HTTP/1.1 chunked body as it arrives. */
export class ChunkedBody {
  private framing: Buffer | null = null;
  /** Bytes of the current chunk still to come. */
  private left = 0;
  /** Bytes of the CRLF after a chunk still to skip. */
  private skip = 0;
  done = false;

  /** The body bytes in `raw` (views into it). Throws on a malformed frame. */
  push(raw: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const data = this.framing ? Buffer.concat([this.framing, raw]) : raw;
    this.framing = null;
    let i = 0;
    while (i < data.length && !this.done) {
      if (this.left > 0) {
        const n = Math.min(this.left, data.length - i);
        out.push(data.subarray(i, i + n));
        i += n;
        this.left -= n;
        if (this.left === 0) this.skip = 2;
      } else if (this.skip > 0) {
        const n = Math.min(this.skip, data.length - i);
        i += n;
        this.skip -= n;
      } else {
        const eol = data.indexOf('\r\n', i);
        if (eol < 0) {
          if (data.length - i > 1024) throw new Error('chunk size line too long');
          this.framing = Buffer.from(data.subarray(i));
          break;
        }
        const sizeText = data.toString('latin1', i, eol).split(';')[0]!.trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) throw new Error('malformed chunk size');
        const size = parseInt(sizeText, 16);
        i = eol + 2;
        if (size === 0) this.done = true;
        else this.left = size;
      }
    }
    return out;
  }
}

/** Keeps the newest complete line of a byte stream. */
export class NewestLine {
  private pending: Buffer | null = null;

  /** The newest line completed by `pieces`, or null. */
  push(pieces: Buffer[]): Buffer | null {
    if (pieces.length === 0) return null;
    const data = pieces.length === 1 && !this.pending ? pieces[0]! : Buffer.concat(this.pending ? [this.pending, ...pieces] : pieces);
    const end = data.lastIndexOf(0x0a);
    if (end < 0) {
      this.pending = data.length > LINE_LIMIT ? null : Buffer.from(data);
      return null;
    }
    const start = data.lastIndexOf(0x0a, end - 1) + 1;
    this.pending = end + 1 < data.length ? Buffer.from(data.subarray(end + 1)) : null;
    // A copy: the bytes read land in a buffer the next read overwrites.
    return end > start ? Buffer.from(data.subarray(start, end)) : null;
  }
}

export interface StatsSocket {
  pause(): void;
  resume(): void;
  close(): void;
}

export interface StatsSocketOptions {
  socketPath: string;
  /**
   * Where reads land (shared by the streams of one owner: each read is handled before the
   * next), so reading allocates nothing and skips the stream machinery.
   */
  readBuffer: Buffer;
  timeoutMs?: number;
}

/**
 * Opens `GET /containers/<id>/stats?stream=1` on the engine's socket; resolves when the engine
 * answered 200, rejects with its status line otherwise.
 */
export function openStatsSocket(options: StatsSocketOptions, id: string, onLine: (line: Buffer) => void, onEnd: () => void): Promise<StatsSocket> {
  if (!/^[0-9a-f]{12,64}$/.test(id)) return Promise.reject(new Error(`invalid container id ${JSON.stringify(id)}`));
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({
      path: options.socketPath,
      onread: {
        buffer: options.readBuffer,
        callback: (nread: number, buffer: Uint8Array) => {
          received(Buffer.from(buffer.buffer, buffer.byteOffset, nread));
          return true;
        },
      },
    });
    let head: Buffer | null = Buffer.alloc(0);
    let body: ChunkedBody | null = null;
    const lines = new NewestLine();
    let settled = false;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      socket.destroy();
      if (settled) onEnd();
    };
    const fail = (err: Error) => {
      if (!settled) {
        settled = true;
        reject(err);
      }
      end();
    };
    socket.setTimeout(timeoutMs, () => {
      if (!settled) fail(new Error(`the engine did not answer the stats call within ${timeoutMs} ms`));
    });
    socket.on('connect', () => socket.write(`GET /containers/${id}/stats?stream=1 HTTP/1.1\r\nHost: docker\r\n\r\n`));
    const received = (chunk: Buffer) => {
      try {
        if (head) {
          head = Buffer.concat([head, chunk]);
          const split = head.indexOf('\r\n\r\n');
          if (split < 0) {
            if (head.length > HEAD_LIMIT) throw new Error('the engine answered an oversized header');
            return;
          }
          const text = head.toString('latin1', 0, split);
          const rest = head.subarray(split + 4);
          head = null;
          const status = text.split('\r\n', 1)[0]!;
          if (!/^HTTP\/1\.[01] 200 /.test(status)) throw new Error(`the engine answered ${status}`);
          if (!/\r\ntransfer-encoding:\s*chunked/i.test(text)) throw new Error('the engine answered an unchunked stats stream');
          body = new ChunkedBody();
          socket.setTimeout(0);
          settled = true;
          resolve({ pause: () => socket.pause(), resume: () => socket.resume(), close: end });
          chunk = rest;
        }
        const line = lines.push(body!.push(chunk));
        if (line) onLine(line);
        if (body!.done) end();
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    };
    socket.on('error', (err) => fail(err));
    socket.on('end', end);
    socket.on('close', end);
  });
}
