import type { Level, Logger } from 'pino';

/** A request's logger (requestId and operation bound), made when the request first logs. */
export interface RequestLogger {
  get(): Logger;
  /** Whether a line at `level` would be written (asks the root: no child is made for it). */
  enabled(level: Level): boolean;
}

/**
 * Most requests log nothing at the levels a server runs with (`warn`): a pino child per request
 * (its bindings serialized at once) would be made for no line.
 */
export function requestLogger(root: Logger, requestId: string, operation: string): RequestLogger {
  return new LazyChild(root, requestId, operation);
}

class LazyChild implements RequestLogger {
  private child: Logger | undefined;

  constructor(
    private readonly root: Logger,
    private readonly requestId: string,
    private readonly operation: string,
  ) {}

  get(): Logger {
    return (this.child ??= this.root.child({ requestId: this.requestId, operation: this.operation }));
  }

  enabled(level: Level): boolean {
    return this.root.isLevelEnabled(level);
  }
}
