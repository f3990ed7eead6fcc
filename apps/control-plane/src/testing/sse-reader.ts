import { waitFor } from '@skiff/testing';

/** One server-sent event as read. */
export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** Reads a text/event-stream response as it arrives: the events, the comments, and whether it ended. */
export class SseReader {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(response: Response) {
    this.reader = response.body!.getReader();
    void this.pump();
  }

  private async pump() {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, at);
          this.buffer = this.buffer.slice(at + 2);
          const e: SseEvent = {};
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id' || field === 'event' || field === 'data') {
                e[field] = value;
                isEvent = true;
              }
            }
          }
          if (isEvent) this.events.push(e);
        }
      }
    } catch {
      // cancelled
    }
    this.ended = true;
  }

  data(): any[] {
    return this.events.map((e) => JSON.parse(e.data ?? 'null'));
  }

  async until(check: (r: SseReader) => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    await waitFor(() => check(this), { timeoutMs, intervalMs: 50, what });
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}
