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
  let child: Logger | undefined;
  return {
    get: () => (child ??= root.child({ requestId, operation })),
    enabled: (level) => root.isLevelEnabled(level),
  };
}
