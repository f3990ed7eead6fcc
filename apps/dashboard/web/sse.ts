/** One server-sent event. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads a server-sent event stream with fetch rather than EventSource: EventSource cannot send
 * the `x-api-key` header, and the key must not travel in a URL (it would reach access logs).
 * Returns when the stream ends or `signal` aborts; throws the error envelope's message.
 */
export async function readSse(url: string, key: string, onEvent: (e: SseEvent) => void, signal: AbortSignal): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': key, accept: 'text/event-stream' }, signal });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => ({}))) as { message?: string };
    throw new Error(body.message ?? `${res.status} ${res.statusText}`);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let current: Partial<SseEvent> & { data?: string } = {};
  for (;;) {
    const { done, value } = await reader.read().catch((err) => {
      if (signal.aborted) return { done: true as const, value: undefined };
      throw err;
    });
    if (done) return;
    buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (current.data !== undefined) onEvent({ id: current.id, event: current.event ?? 'message', data: current.data });
        current = {};
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') current.data = current.data === undefined ? text : `${current.data}\n${text}`;
        else if (field === 'event') current.event = text;
        else if (field === 'id') current.id = text;
      }
    }
  }
}
