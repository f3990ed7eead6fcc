import createClient from 'openapi-fetch';
import type { paths } from './api-schema.js';
import { apiError } from './errors.js';

export { ApiError, fieldsOf } from './errors.js';

export type Api = ReturnType<typeof createClient<paths>>;

/** A typed client of the public API (`/api/<router>.<operation>`), acting with one key. */
export function apiFor(key: string): Api {
  return createClient<paths>({ baseUrl: location.origin, headers: { 'x-api-key': key } });
}

/** The answer's data, or an ApiError. */
export async function ok<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (error !== undefined || data === undefined) throw apiError(error, `${response.status} ${response.statusText}`);
  return data;
}

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
