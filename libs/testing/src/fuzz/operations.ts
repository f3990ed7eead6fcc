/** The operations of an OpenAPI document as the fuzzer needs them: name, method, input and output schemas. */

export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  $ref?: string;
  $defs?: Record<string, Schema>;
  [k: string]: unknown;
};

export interface FuzzOperation {
  name: string;
  method: 'GET' | 'POST';
  /** The input as one object schema (a GET operation's query parameters gathered into one). */
  input: Schema;
  /** The success answer's schema. */
  output: Schema;
  /** An operation that takes a file: multipart/form-data (the fields as text parts) or JSON without the file. */
  upload: boolean;
}

interface OpenApiOperation {
  parameters?: { name: string; required?: boolean; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>>; components?: { schemas?: Record<string, Schema> } };

/** Every `/api/<operation>` of the document. */
export function operationsOf(document: OpenApiDocument): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  // Each schema carries the document's named schemas, so that `resolve` finds what it refers to.
  const named = document.components?.schemas ?? {};
  const rooted = (s: Schema): Schema => (Object.keys(named).length ? { ...s, $defs: { ...named, ...s.$defs } } : s);
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, op] of Object.entries(methods)) {
      const output = op.responses?.['200']?.content?.['application/json']?.schema ?? {};
      if (method === 'get') {
        const params = op.parameters ?? [];
        out.push({
          name: path.slice(5),
          method: 'GET',
          input: {
            type: 'object',
            properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
            required: params.filter((p) => p.required).map((p) => p.name),
          },
          output,
          upload: false,
        });
      } else if (method === 'post') {
        const content = op.requestBody?.content ?? {};
        const multipart = content['multipart/form-data'];
        out.push({ name: path.slice(5), method: 'POST', input: (multipart ?? content['application/json'])?.schema ?? { type: 'object' }, output, upload: !!multipart });
      }
    }
  }
  return out.map((o) => ({ ...o, input: rooted(o.input), output: rooted(o.output) }));
}

/** A `$ref` to a named schema (`#/$defs/x` as zod writes it, `#/components/schemas/x` in the document), resolved. */
export function resolve(schema: Schema, root: Schema): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) {
    const name = /^#\/(?:\$defs|components\/schemas)\/(.+)$/.exec(s.$ref)?.[1];
    const target = name === undefined ? undefined : root.$defs?.[name];
    if (!target) return {};
    s = target;
  }
  return s;
}

/** The types a schema admits (`null` included when it does). */
export function typesOf(schema: Schema, root: Schema): Set<string> {
  const s = resolve(schema, root);
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return new Set(variants.flatMap((v) => [...typesOf(v, root)]));
  if (s.enum) return new Set(s.enum.map((v) => (v === null ? 'null' : typeof v)));
  if (s.const !== undefined) return new Set([s.const === null ? 'null' : typeof s.const]);
  if (s.type === undefined) return new Set(['any']);
  return new Set((Array.isArray(s.type) ? s.type : [s.type]).map((t) => (t === 'integer' ? 'number' : t)));
}
