// The API's refusals as errors; no DOM here, so Node tests can use it.

interface ErrorBody {
  code?: string;
  message?: string;
  issues?: { path?: (string | number)[]; message?: string }[];
}

/** A refusal of the API: its message says the code and each field with its reason; `fields` maps each field to its reason. */
export class ApiError extends Error {
  readonly fields: Record<string, string>;
  constructor(message: string, fields: Record<string, string>) {
    super(message);
    this.fields = fields;
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

/** The reason the API gave for each field, when it refused with BAD_REQUEST. */
export const fieldsOf = (err: unknown): Record<string, string> => (err instanceof ApiError ? err.fields : {});
