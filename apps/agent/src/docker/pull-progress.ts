/**
 * The progress stream of an image pull (`POST /images/create`): JSON objects, one a line.
 * A pull that fails after it started answers 200 and reports the failure in the stream, as
 * an event with `error` / `errorDetail.message` (the registry's reason, e.g.
 * `unauthorized: authentication required`), so the stream must be read to its end.
 */

/** Reads the stream to its end; answers the last error it reported, or null when none. */
export async function pullFailure(stream: AsyncIterable<Buffer | string>): Promise<string | null> {
  const decoder = new TextDecoder();
  let pending = '';
  let failure: string | null = null;
  const take = (line: string) => {
    const message = errorOf(line);
    if (message !== null) failure = message;
  };
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      take(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
  }
  take(pending + decoder.decode());
  return failure;
}

function errorOf(line: string): string | null {
  const text = line.trim();
  if (text === '') return null;
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return null; // Not an event (the engine writes only JSON; a torn line says nothing).
  }
  if (!event || typeof event !== 'object') return null;
  const { error, errorDetail } = event as { error?: unknown; errorDetail?: { message?: unknown } };
  const detail = errorDetail && typeof errorDetail.message === 'string' ? errorDetail.message : '';
  const message = detail || (typeof error === 'string' ? error : '');
  return message.trim() === '' ? null : message.trim();
}

/**
 * A pull refused before its stream starts is an error status whose body docker-modem puts
 * into its message only: `(HTTP code 500) server error - unauthorized: authentication
 * required`. Answers the engine's part of such a message, or the message as it is.
 */
export function engineReasonOf(message: string): string {
  const reason = /^\(HTTP code \d+\) [^-]*- ([\s\S]+)$/.exec(message)?.[1]?.trim();
  return reason ? reason : message;
}
