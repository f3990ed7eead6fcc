import { type FieldKind, type JsonSchema, fieldKind, inputJsonSchema } from '@skiff/contracts';
import { z } from 'zod';

export { inputJsonSchema, type JsonSchema } from '@skiff/contracts';

export function outputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
}

const kindsCache = new WeakMap<z.ZodType, Map<string, FieldKind>>();

function fieldKinds(schema: z.ZodType): Map<string, FieldKind> {
  let kinds = kindsCache.get(schema);
  if (!kinds) {
    const props = inputJsonSchema(schema).properties ?? {};
    kinds = new Map(Object.entries(props).map(([k, v]) => [k, fieldKind(v)]));
    kindsCache.set(schema, kinds);
  }
  return kinds;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/**
 * Turns a query string into the input object of a GET operation: one parameter per field,
 * repeated parameters form lists, `true`/`false` and numbers parsed strictly. A value that
 * does not parse is passed on as text, so the contract rejects it with the field named.
 */
export function inputFromQuery(schema: z.ZodType, params: URLSearchParams): Record<string, unknown> {
  const kinds = fieldKinds(schema);
  const input: Record<string, unknown> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    const kind = kinds.get(key);
    if (kind === undefined) continue;
    if (kind === 'array') {
      input[key] = values;
      continue;
    }
    if (values.length > 1) {
      input[key] = values;
      continue;
    }
    const v = values[0]!;
    if (kind === 'boolean') input[key] = v === 'true' ? true : v === 'false' ? false : v;
    else if (kind === 'number') input[key] = NUMBER.test(v) ? Number(v) : v;
    else input[key] = v;
  }
  return input;
}
