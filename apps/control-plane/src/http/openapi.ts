import { allContracts, type Contract, type RouterName } from '@skiff/contracts';
import { inputJsonSchema, outputJsonSchema, type JsonSchema } from './input-shape.js';
import { TAG_DESCRIPTIONS } from './openapi-tags.js';

const errorRef = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** Named schemas (`components/schemas`) gathered from the operations' own `$defs`. */
type Components = Map<string, JsonSchema>;

const DEFS_REF = /^#\/\$defs\/(.+)$/;

function withComponentRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withComponentRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const name = DEFS_REF.exec(value)?.[1];
      if (value === '#' || name === undefined) throw new Error(`a schema refers to ${value}: register it by name (z.globalRegistry, id)`);
      out.$ref = `#/components/schemas/${name}`;
    } else out[key] = withComponentRefs(value);
  }
  return out;
}

/**
 * An operation's schema for the document: zod writes the schemas it reuses or that recurse as
 * `$defs` of the schema, referred to as `#/$defs/<id>`; in an OpenAPI document `#` is the
 * document, so they move to `components/schemas` and the references follow. Only schemas
 * registered by name are accepted (an anonymous `__schemaN` would be an unreadable component).
 */
function strip(schema: JsonSchema, components: Components): JsonSchema {
  const { $schema: _ignored, $defs, ...rest } = schema;
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    if (/^__schema\d+$/.test(name)) throw new Error(`an unnamed recursive schema (${name}): register it by name (z.globalRegistry, id)`);
    const moved = withComponentRefs(def) as JsonSchema;
    const known = components.get(name);
    if (known && JSON.stringify(known) !== JSON.stringify(moved)) throw new Error(`two different schemas are named ${name}`);
    components.set(name, moved);
  }
  return withComponentRefs(rest) as JsonSchema;
}

/**
 * An input as the API takes it: a field that an object does not list is refused
 * (unknown-fields.ts), so each object that lists its fields is closed to others. Not the
 * object variants of a union of several: there a field of any of them is accepted.
 */
function closed(schema: JsonSchema, variant = false): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, closed(v)]));
  if (schema.items) out.items = closed(schema.items);
  const union = (variants: JsonSchema[]) => {
    const objects = variants.filter((v) => v.properties).length;
    return variants.map((v) => closed(v, objects > 1));
  };
  if (schema.anyOf) out.anyOf = union(schema.anyOf);
  if (schema.oneOf) out.oneOf = union(schema.oneOf);
  if (!variant && schema.properties && schema.additionalProperties === undefined && schema.patternProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

function accessNote(c: Contract): string {
  const parts: string[] = [];
  if (c.access.auth === 'bodyToken') parts.push('Authenticated by the token in its body, not by an API key.');
  if (c.access.role !== 'member') parts.push(`Requires the ${c.access.role} role.`);
  if (c.access.grant) parts.push(`Members need the \`${c.access.grant}\` permission.`);
  return parts.join(' ');
}

function operationOf(c: Contract, components: Components) {
  const input = closed(strip(inputJsonSchema(c.input), components));
  const op: Record<string, unknown> = {
    operationId: c.name,
    tags: [c.router],
    summary: c.summary,
    description: [c.description, accessNote(c)].filter(Boolean).join('\n\n') || undefined,
    security: c.access.auth === 'bodyToken' ? [] : [{ apiKey: [] }, { bearer: [] }],
    // Skiff's own operations, beyond the common API of such platforms.
    ...(c.extension ? { 'x-skiff-extension': true } : {}),
  };
  if (c.method === 'GET') {
    const required = new Set(input.required ?? []);
    op.parameters = Object.entries(input.properties ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: required.has(name),
      schema,
      ...(schema.type === 'array' ? { style: 'form', explode: true } : {}),
    }));
  } else if (c.upload) {
    const { field, description } = c.upload;
    const schema = {
      ...input,
      properties: { ...input.properties, [field]: { type: 'string', contentMediaType: 'application/octet-stream', description } },
      required: [...(input.required ?? []), field],
    };
    op.requestBody = { required: true, content: { 'multipart/form-data': { schema } } };
  } else {
    op.requestBody = {
      required: true,
      content: { 'application/json': { schema: input, example: c.example } },
    };
  }
  op.responses = {
    200: {
      description: 'Success',
      content: { 'application/json': { schema: strip(outputJsonSchema(c.output), components) } },
    },
    400: errorRef('BAD_REQUEST: the input failed the constraints; `issues` name the fields'),
    401: errorRef('UNAUTHORIZED: no or an unknown API key'),
    403: errorRef('FORBIDDEN: the caller lacks the role, permission or resource access'),
    ...(c.method === 'GET' ? { 404: errorRef('NOT_FOUND: no such resource in the organization') } : {}),
    500: errorRef('INTERNAL_SERVER_ERROR: logged with the request id'),
    501: errorRef('NOT_IMPLEMENTED: the capability is not available in this version yet'),
  };
  return op;
}

/** The OpenAPI 3.1 document of every contract. Deterministic: it is checked in. */
export function buildOpenApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const components: Components = new Map();
  for (const c of allContracts) paths[`/api/${c.name}`] = { [c.method.toLowerCase()]: operationOf(c, components) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Skiff API',
      version,
      description:
        'RPC-style API of Skiff: one endpoint per operation, `/api/<router>.<operation>`. ' +
        'GET operations take their input in the query string (one parameter per field; repeat a ' +
        'parameter for lists; `true`/`false` and numbers are parsed strictly); POST operations ' +
        'take a JSON object. A field an operation does not take is BAD_REQUEST naming it (`unknown field`); ' +
        'a missing one says `required`. Errors are `{code, message, issues, ' +
        'requestId}` with BAD_REQUEST 400, UNAUTHORIZED 401, FORBIDDEN 403, NOT_FOUND 404, ' +
        'INTERNAL_SERVER_ERROR 500 and NOT_IMPLEMENTED 501. An unknown operation, or a known one ' +
        'called with the wrong method, is NOT_FOUND (its message and the `Allow` header name the method). Present an API key as `x-api-key: <key>` ' +
        'or `Authorization: Bearer <key>`.',
    },
    // The paths carry the `/api` prefix, as the server routes them: the base is the origin
    // that serves the document (a relative URL), whichever host and port Skiff listens on.
    servers: [{ url: '/', description: 'The Skiff that serves this document (its origin, e.g. http://localhost:3000)' }],
    tags: [...new Set(allContracts.map((c) => c.router as RouterName))].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      schemas: {
        ...Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))),
        Error: {
          type: 'object',
          required: ['code', 'message', 'issues', 'requestId'],
          properties: {
            code: {
              type: 'string',
              enum: ['BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INTERNAL_SERVER_ERROR', 'NOT_IMPLEMENTED'],
            },
            message: { type: 'string' },
            issues: {
              type: 'array',
              items: {
                type: 'object',
                required: ['path', 'message'],
                properties: {
                  path: { type: 'array', items: { type: ['string', 'number'] } },
                  message: { type: 'string' },
                },
              },
            },
            requestId: { type: 'string' },
          },
        },
      },
    },
  };
}
