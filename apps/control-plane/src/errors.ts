/** A failed field of the input, as it appears in the error body's `issues`. */
export interface Issue {
  path: (string | number)[];
  message: string;
}

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'NOT_IMPLEMENTED'
  | 'INTERNAL_SERVER_ERROR';

export const statusOf: Record<ErrorCode, 400 | 401 | 403 | 404 | 500 | 501> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  NOT_IMPLEMENTED: 501,
  INTERNAL_SERVER_ERROR: 500,
};

/** An error a service throws on purpose; the HTTP layer turns it into the error envelope. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
  }
}

export const NotFound = (what = 'Not found') => new DomainError('NOT_FOUND', what);
export const Forbidden = (why = 'Insufficient access') => new DomainError('FORBIDDEN', why);
export const Unauthorized = (why = 'Authorization not provided') =>
  new DomainError('UNAUTHORIZED', why);
/** Bad input found by a service (beyond the contract's own checks), naming the field. */
export const Invalid = (field: string, message: string) =>
  new DomainError('BAD_REQUEST', `Invalid input data: ${field}: ${message}`, [
    { path: [field], message },
  ]);
export const NotImplemented = (operation: string) =>
  new DomainError('NOT_IMPLEMENTED', `${operation} is not implemented yet`);
