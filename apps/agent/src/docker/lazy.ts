/**
 * A port whose implementation loads with its first call (an idle agent holds only what
 * waiting needs: dockerode and what uses it load when a request first needs them). Every
 * member of the port must be a method answering a Promise; a failed load is tried again by
 * the next call.
 */
type AsyncPort<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : never };

export function loadedOnFirstCall<T extends AsyncPort<T>>(load: () => Promise<T>): T {
  let loaded: Promise<T> | null = null;
  const port = () => {
    loaded ??= load().catch((err: unknown) => {
      loaded = null;
      throw err;
    });
    return loaded;
  };
  return new Proxy({} as T, {
    get: (_target, member) =>
      member === 'then' ? undefined : (...args: unknown[]) => port().then((p) => (p[member as keyof T] as (...a: unknown[]) => Promise<unknown>)(...args)),
  });
}

/** A Dockerode client of the engine at `socketPath` (loaded with the first call that needs one). */
export async function dockerodeAt(socketPath: string, timeoutMs?: number) {
  const { default: Dockerode } = await import('dockerode');
  return new Dockerode({ socketPath, ...(timeoutMs ? { timeout: timeoutMs } : {}) });
}
