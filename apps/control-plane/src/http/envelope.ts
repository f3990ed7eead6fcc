import type { z } from 'zod';
import { DomainError, type ErrorCode, type Issue } from '../errors.js';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  issues: Issue[];
  requestId: string;
}

const defaultMessage: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Invalid input data',
  UNAUTHORIZED: 'Authorization not provided',
  FORBIDDEN: 'Insufficient access',
  NOT_FOUND: 'Not found',
  NOT_IMPLEMENTED: 'Not implemented',
  INTERNAL_SERVER_ERROR: 'Internal server error',
};

export function errorBody(code: ErrorCode, requestId: string, message?: string, issues: Issue[] = []): ErrorBody {
  return { code, message: message ?? defaultMessage[code], issues, requestId };
}

export function validationError(error: z.ZodError): DomainError {
  const issues = error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: i.message,
  }));
  const fields = [...new Set(issues.map((i) => i.path.join('.') || '(body)'))].join(', ');
  return new DomainError('BAD_REQUEST', `Invalid input data: ${fields}`, issues);
}
