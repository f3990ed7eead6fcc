/**
 * Fields an input names that its operation does not take. Contracts' objects drop unknown
 * keys when they parse, so a typo (`{"replica": 3}`) would answer 200 and change nothing:
 * these are refused instead, each named. Read from the input's JSON Schema (input-shape.ts),
 * so what is refused is what the OpenAPI document leaves out. Records (objects with
 * `additionalProperties` schemas) and schemas that say nothing of their keys take any key.
 */
import type { Issue } from '../errors.js';
import type { JsonSchema } from './input-shape.js';

export const UNKNOWN_FIELD = 'unknown field: this operation does not take it';

export function unknownFieldIssues(root: JsonSchema, value: unknown): Issue[] {
  const issues: Issue[] = [];
  walk(root, root, value, [], issues);
  return issues;
}

/** Deeper than this, nesting is not looked at (a recursive type such as JSON metadata can nest without end). */
const MAX_DEPTH = 32;

function walk(root: JsonSchema, schema: JsonSchema | undefined, value: unknown, path: Array<string | number>, issues: Issue[]): void {
  const s = deref(root, schema);
  if (!s || path.length > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    const items = variantsOf(root, s).map((v) => v.items).find(Boolean);
    if (items) value.forEach((item, i) => walk(root, items, item, [...path, i], issues));
    return;
  }
  if (!isPlainObject(value)) return;
  const objects = variantsOf(root, s).filter(describesObject);
  if (objects.length === 0 || objects.some(isOpen)) return;
  for (const [key, child] of Object.entries(value)) {
    const declaring = objects.find((o) => o.properties && Object.hasOwn(o.properties, key));
    if (declaring) walk(root, declaring.properties![key], child, [...path, key], issues);
    else if (!objects.some((o) => isRecord(o))) issues.push({ path: [...path, key], message: UNKNOWN_FIELD });
    else walk(root, objects.find(isRecord)!.additionalProperties as JsonSchema, child, [...path, key], issues);
  }
}

/** The schema itself, or the variants of a union (nested unions flattened). */
function variantsOf(root: JsonSchema, s: JsonSchema): JsonSchema[] {
  const variants = s.anyOf ?? s.oneOf;
  if (!variants) return [s];
  return variants.flatMap((v) => {
    const d = deref(root, v);
    return d ? variantsOf(root, d) : [];
  });
}

const typeIncludes = (s: JsonSchema, t: string) => (Array.isArray(s.type) ? s.type.includes(t) : s.type === t);

function describesObject(s: JsonSchema): boolean {
  return typeIncludes(s, 'object') || s.properties !== undefined || s.additionalProperties !== undefined;
}

const isRecord = (s: JsonSchema) => typeof s.additionalProperties === 'object' && s.additionalProperties !== null;

/** An object schema that does not list its keys (or allows any): nothing is unknown to it. */
function isOpen(s: JsonSchema): boolean {
  if (s.additionalProperties === true) return true;
  if (isRecord(s)) return Object.keys(s.additionalProperties as object).length === 0;
  return s.properties === undefined && s.additionalProperties === undefined && s.propertyNames === undefined;
}

/** Follows `$ref`s within the document (`#`, `#/$defs/…`). */
function deref(root: JsonSchema, schema: JsonSchema | undefined): JsonSchema | undefined {
  let s = schema;
  for (let hops = 0; s && typeof s.$ref === 'string' && hops < 16; hops++) {
    const ref = s.$ref;
    if (ref === '#') s = root;
    else if (ref.startsWith('#/')) s = ref.slice(2).split('/').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], root) as JsonSchema | undefined;
    else return undefined;
  }
  return s;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the field at `path` of the input may be null (so a client sends null to say "none"). */
export function fieldAllowsNull(root: JsonSchema, path: ReadonlyArray<string | number>): boolean {
  let schemas: JsonSchema[] = [root];
  for (const part of path) {
    schemas = schemas.flatMap((s) => {
      const d = deref(root, s);
      if (!d) return [];
      return variantsOf(root, d).flatMap((v) => {
        const next = typeof part === 'number' ? v.items : v.properties?.[part];
        return next ? [next] : [];
      });
    });
  }
  return schemas.some((s) => {
    const d = deref(root, s);
    return !!d && variantsOf(root, d).some((v) => typeIncludes(v, 'null'));
  });
}
