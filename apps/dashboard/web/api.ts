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

/** The answer's data, or an Error saying the code, and each field with its reason. */
export async function ok<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (error !== undefined || data === undefined) {
    const e = (error ?? {}) as ErrorBody;
    const fields = (e.issues ?? []).map((i) => `${(i.path ?? []).join('.') || 'input'}: ${i.message ?? ''}`);
    throw new Error([e.message ?? `${response.status} ${response.statusText}`, ...fields].join(' — '));
  }
  return data;
}

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
