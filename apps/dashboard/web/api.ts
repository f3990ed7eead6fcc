import createClient from 'openapi-fetch';
import type { paths } from './api-schema.js';

export type Api = ReturnType<typeof createClient<paths>>;

/** A typed client of the public API (`/api/<router>.<operation>`), acting with one key. */
export function apiFor(key: string): Api {
  return createClient<paths>({ baseUrl: location.origin, headers: { 'x-api-key': key } });
}

interface ErrorBody {
  code?: string;
  message?: string;
  issues?: { path?: (string | number)[]; message?: string }[];
}

/** A refusal of the API: its message says the code and each field with its reason; `fields` maps each field to its reason. */
export class ApiError extends Error {
  constructor(message: string, readonly fields: Record<string, string>) {
    super(message);
  }
}

/** The ApiError of an error body (a BAD_REQUEST names its fields in `issues`). */
export function apiError(body: unknown, status: string): ApiError {
  const e = (body ?? {}) as ErrorBody;
  const fields: Record<string, string> = {};
  const lines = (e.issues ?? []).map((i) => {
    const field = (i.path ?? []).join('.') || 'input';
    fields[field] ??= i.message ?? '';
    return `${field}: ${i.message ?? ''}`;
  });
  return new ApiError([e.message ?? status, ...lines].join(' — '), fields);
}

/** The answer's data, or an ApiError. */
export async function ok<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (error !== undefined || data === undefined) throw apiError(error, `${response.status} ${response.statusText}`);
  return data;
}

/** The reason the API gave for each field, when it refused with BAD_REQUEST. */
export const fieldsOf = (err: unknown): Record<string, string> => (err instanceof ApiError ? err.fields : {});

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
