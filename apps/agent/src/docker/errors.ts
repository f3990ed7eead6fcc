/**
 * Typed errors of the Docker port. Every failure of a Docker Engine call becomes one of
 * these, carrying the engine's own message (what a deployment log shows the user) and the
 * operation that failed. Callers branch on the class, never on message text.
 */
export class DockerError extends Error {
  override readonly name: string = 'DockerError';
  constructor(
    /** What the driver was doing, e.g. `createService web-1`. */
    readonly operation: string,
    /** The engine's message, or the reason the engine could not be asked. */
    readonly engineMessage: string,
    /** The engine's HTTP status, or null when no answer came. */
    readonly statusCode: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(`${operation}: ${engineMessage}`, options);
  }
}

/** 404: no such service, network, image or task. */
export class DockerNotFoundError extends DockerError {
  override readonly name = 'DockerNotFoundError';
}

/** 409, or an object that exists but is not what Skiff needs (e.g. not managed by Skiff). */
export class DockerConflictError extends DockerError {
  override readonly name = 'DockerConflictError';
}

/** 400, or input the driver refused before calling the engine (a bad name or image ref). */
export class DockerInvalidError extends DockerError {
  override readonly name = 'DockerInvalidError';
}

/** 503: the engine is not in a swarm, or this node is not a manager of it. */
export class DockerSwarmError extends DockerError {
  override readonly name = 'DockerSwarmError';
}

/** No answer: the socket is missing, the connection was refused or reset, or timed out. */
export class DockerUnavailableError extends DockerError {
  override readonly name = 'DockerUnavailableError';
}

/** A message without the engine's object ids (runs of 12 hex digits or more): the same problem met again reads the same. */
export function withoutEngineIds(message: string): string {
  return message.replace(/[0-9a-f]{12,}/g, '…');
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'EACCES',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ABORT_ERR',
]);

function engineMessageOf(err: { message?: unknown; json?: unknown }): string {
  const json = err.json;
  if (json && typeof json === 'object' && typeof (json as { message?: unknown }).message === 'string') {
    return (json as { message: string }).message.trim();
  }
  if (typeof json === 'string' && json.trim() !== '') return json.trim();
  return typeof err.message === 'string' && err.message !== '' ? err.message.trim() : String(err);
}

/**
 * Turns what dockerode (docker-modem) threw into a typed error. docker-modem's errors carry
 * `statusCode` and the engine's JSON body (`json.message`); socket errors carry `code`.
 */
export function toDockerError(operation: string, err: unknown): DockerError {
  if (err instanceof DockerError) return err;
  if (!err || typeof err !== 'object') {
    return new DockerError(operation, String(err), null, { cause: err });
  }
  const e = err as { statusCode?: unknown; code?: unknown; message?: unknown; json?: unknown; name?: unknown };
  const status = typeof e.statusCode === 'number' ? e.statusCode : null;
  if (status === null) {
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' && e.message ? e.message : String(err);
    if (UNAVAILABLE_CODES.has(code) || e.name === 'AbortError' || /socket hang up/i.test(message)) {
      return new DockerUnavailableError(operation, `Docker Engine not reachable: ${message}`, null, { cause: err });
    }
    return new DockerError(operation, message, null, { cause: err });
  }
  const message = engineMessageOf(e);
  const Kind =
    status === 404
      ? DockerNotFoundError
      : status === 409
        ? DockerConflictError
        : status === 400
          ? DockerInvalidError
          : status === 503
            ? DockerSwarmError
            : DockerError;
  return new Kind(operation, message, status, { cause: err });
}
