/**
 * How a run ends when the agent stops: AbandonedError, and a pause that ends in it. Below
 * every part that runs long work (the command pipeline, handlers, builds, compose runs), so
 * each of them can stop the same way without importing the others.
 */

/** Thrown (or rejected with) when a run stops because the agent stops. */
export class AbandonedError extends Error {
  override name = 'AbandonedError';
  constructor() {
    super('the agent is stopping');
  }
}

/** Waits `ms`, or rejects with AbandonedError as soon as the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new AbandonedError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbandonedError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
