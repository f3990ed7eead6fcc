/**
 * An HTTP/1.1 answer read off a byte stream (libsql-server's, through the relay): its head
 * parsed, its body (Content-Length, chunked, or up to the stream's end) passed on in pieces of
 * up to PIECE_BYTES. node:http hands a chunked body on as one new Buffer per chunk: sqld
 * writes a dump in chunks of a few hundred bytes, and a million of them outgrew the agent's
 * young generation (the agent's RSS +34 MB during a 611 MB dump, `tools/bench backup`); here
 * they are gathered first, so what reads the body (gzip, the upload) sees few large pieces.
 */
import { Transform, type TransformCallback } from 'node:stream';

export interface AnswerHead {
  status: number;
  /** Lower-case names. */
  headers: Map<string, string>;
}

/** The longest head, and the longest chunk-size or trailer line. */
const HEAD_LIMIT = 64 * 1024;
const LINE_LIMIT = 4096;
/** The body is passed on once this much has arrived (and at its end). */
export const PIECE_BYTES = 64 * 1024;

type State = 'head' | 'size' | 'data' | 'data-end' | 'trailer' | 'length' | 'rest' | 'done';

export class HttpAnswer extends Transform {
  /** The answer's head, once read; rejects when the stream fails or ends before it. */
  readonly head: Promise<AnswerHead>;
  /** The body ended where its framing says (or, unframed, with the stream). */
  complete = false;
  private state: State = 'head';
  private line = '';
  private remaining = 0;
  /** Body bytes not yet passed on. */
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;
  private gotHead!: (head: AnswerHead) => void;
  private noHead!: (err: Error) => void;

  constructor() {
    super();
    this.head = new Promise<AnswerHead>((resolve, reject) => {
      this.gotHead = resolve;
      this.noHead = reject;
    });
    this.head.catch(() => undefined);
    this.once('error', (err) => this.noHead(err));
    this.once('close', () => this.noHead(new Error('the connection closed before the answer’s head')));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      let offset = 0;
      while (offset < chunk.length && this.state !== 'done') offset = this.step(chunk, offset);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    this.passOn();
    if (this.state === 'rest') this.complete = true;
    if (this.state === 'head') return done(new Error('the connection closed before the answer’s head'));
    done();
  }

  /** Reads from `offset` on; where it stopped. */
  private step(chunk: Buffer, offset: number): number {
    switch (this.state) {
      case 'head':
      case 'size':
      case 'trailer': {
        const end = chunk.indexOf(0x0a, offset);
        this.line += chunk.toString('latin1', offset, end === -1 ? chunk.length : end + 1);
        if (this.line.length > (this.state === 'head' ? HEAD_LIMIT : LINE_LIMIT)) throw new Error(`the answer’s ${this.state} is too long`);
        if (end === -1) return chunk.length;
        this.lineRead();
        return end + 1;
      }
      case 'data':
      case 'length':
      case 'rest': {
        const end = this.state === 'rest' ? chunk.length : Math.min(chunk.length, offset + this.remaining);
        this.gather(chunk.subarray(offset, end));
        this.remaining -= end - offset;
        if (this.state !== 'rest' && this.remaining === 0) this.bodyPartEnded();
        return end;
      }
      case 'data-end': {
        // The CRLF after a chunk's data.
        const end = Math.min(chunk.length, offset + this.remaining);
        this.remaining -= end - offset;
        if (this.remaining === 0) this.state = 'size';
        return end;
      }
      default:
        return chunk.length;
    }
  }

  private bodyPartEnded(): void {
    if (this.state === 'length') this.finishBody();
    else {
      this.state = 'data-end';
      this.remaining = 2;
    }
  }

  private finishBody(): void {
    this.state = 'done';
    this.complete = true;
    this.passOn();
    this.push(null);
  }

  private gather(piece: Buffer): void {
    this.gathered.push(piece);
    this.gatheredBytes += piece.length;
    if (this.gatheredBytes >= PIECE_BYTES) this.passOn();
  }

  private passOn(): void {
    if (this.gatheredBytes === 0) return;
    this.push(this.gathered.length === 1 ? this.gathered[0] : Buffer.concat(this.gathered, this.gatheredBytes));
    this.gathered = [];
    this.gatheredBytes = 0;
  }

  private lineRead(): void {
    if (this.state === 'head') {
      if (!this.line.endsWith('\r\n\r\n') && !this.line.endsWith('\n\n')) return;
      this.headRead(this.line);
    } else if (this.state === 'size') {
      const size = /^([0-9a-fA-F]{1,8})[ \t]*(;[^\r\n]*)?\r?\n$/.exec(this.line);
      if (!size) throw new Error('the answer’s chunked body is malformed');
      this.remaining = Number.parseInt(size[1]!, 16);
      this.state = this.remaining === 0 ? 'trailer' : 'data';
    } else if (this.line === '\r\n' || this.line === '\n') {
      this.finishBody();
    }
    this.line = '';
  }

  private headRead(text: string): void {
    const [statusLine = '', ...lines] = text.split(/\r?\n/).filter(Boolean);
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!status) throw new Error('the answer is not HTTP/1.1');
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = headers.get('content-length');
    if (/\bchunked\b/i.test(headers.get('transfer-encoding') ?? '')) this.state = 'size';
    else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new Error('the answer’s Content-Length is malformed');
      this.remaining = Number(length);
      this.state = 'length';
      if (this.remaining === 0) this.finishBody();
    } else this.state = 'rest';
    this.gotHead({ status: Number(status[1]), headers });
  }
}
