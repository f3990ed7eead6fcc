import { z } from 'zod';

/** The parts of a JSON Schema (2020-12, as zod writes it) that readers of an input look at. */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  description?: string;
  [k: string]: unknown;
};

/** How a field's value is written as text (a flag, a query parameter): `json` is anything else. */
export type FieldKind = 'string' | 'number' | 'boolean' | 'array' | 'json';

const inputs = new WeakMap<z.ZodType, JsonSchema>();

/** The JSON Schema of an input, as clients send it; computed once per schema. */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  let s = inputs.get(schema);
  if (!s) {
    s = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    inputs.set(schema, s);
  }
  return s;
}

/** The alternatives of a schema (nested anyOf/oneOf flattened); the schema itself when it has none. */
export function variantsOf(s: JsonSchema): JsonSchema[] {
  const list = s.anyOf ?? s.oneOf;
  return list ? list.flatMap(variantsOf) : [s];
}

/** The one kind every non-null alternative of a field has; `json` when they differ. */
export function fieldKind(s: JsonSchema): FieldKind {
  const kinds = new Set(
    variantsOf(s)
      .filter((v) => v.type !== 'null')
      .map((v): FieldKind => {
        const t = Array.isArray(v.type) ? v.type.find((x) => x !== 'null') : v.type;
        if (t === 'integer' || t === 'number') return 'number';
        if (t === 'string' || (v.enum && v.enum.every((e) => typeof e === 'string'))) return 'string';
        if (t === 'boolean' || t === 'array') return t;
        return 'json';
      }),
  );
  return kinds.size === 1 ? [...kinds][0]! : 'json';
}
