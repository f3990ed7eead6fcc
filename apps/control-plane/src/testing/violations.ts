import type { Contract } from '@skiff/contracts';
import { type JsonSchema, inputJsonSchema } from '../http/input-shape.js';

export interface Violation {
  field: string;
  why: string;
  input: Record<string, unknown>;
}

function unwrapNullable(s: JsonSchema): { base: JsonSchema; nullable: boolean } {
  if (Array.isArray(s.type)) {
    const types = s.type.filter((x) => x !== 'null');
    return { base: { ...s, type: types.length === 1 ? types[0] : types }, nullable: types.length < s.type.length };
  }
  const variants = s.anyOf ?? s.oneOf;
  if (variants) {
    const rest = variants.filter((v) => v.type !== 'null');
    if (rest.length === 1 && rest.length < variants.length) return { base: rest[0]!, nullable: true };
    return { base: s, nullable: variants.length !== rest.length };
  }
  return { base: s, nullable: false };
}

/** Values breaking one constraint of a field, for how the operation takes its input. */
function badValues(s: JsonSchema, method: string): { value: unknown; why: string }[] {
  const out: { value: unknown; why: string }[] = [];
  const get = method === 'GET';
  if (Array.isArray(s.enum)) out.push({ value: 'not-one-of-the-values', why: 'enum' });
  switch (s.type) {
    case 'string': {
      if (!get) out.push({ value: 12345, why: 'type' });
      const min = s.minLength as number | undefined;
      const max = s.maxLength as number | undefined;
      if (min && min >= 1) out.push({ value: 'a'.repeat(min - 1), why: `minLength ${min}` });
      if (max !== undefined) out.push({ value: 'a'.repeat(max + 1), why: `maxLength ${max}` });
      if (s.pattern) out.push({ value: 'bad value!', why: 'pattern' });
      if (s.format === 'email') out.push({ value: 'not-an-email', why: 'email format' });
      if (s.format === 'uri') out.push({ value: 'not a uri', why: 'uri format' });
      break;
    }
    case 'number':
    case 'integer': {
      out.push({ value: 'abc', why: 'type' });
      if (typeof s.minimum === 'number') out.push({ value: s.minimum - 1, why: `minimum ${s.minimum}` });
      if (typeof s.maximum === 'number') out.push({ value: s.maximum + 1, why: `maximum ${s.maximum}` });
      if (s.type === 'integer') out.push({ value: 1.5, why: 'integer' });
      break;
    }
    case 'boolean':
      out.push({ value: 'yes', why: 'type' });
      break;
    case 'array':
      if (!get) {
        out.push({ value: 'not-a-list', why: 'type' });
        if (typeof s.minItems === 'number' && s.minItems > 0) out.push({ value: [], why: `minItems ${s.minItems}` });
      }
      break;
    case 'object':
      if (!get) out.push({ value: 'not-an-object', why: 'type' });
      break;
  }
  return out;
}

/** Every single-field violation of a contract's top-level constraints, built on its example. */
export function violationsOf(c: Contract): Violation[] {
  const schema = inputJsonSchema(c.input);
  const example = c.example as Record<string, unknown>;
  const required = new Set(schema.required ?? []);
  const out: Violation[] = [];
  for (const [field, prop] of Object.entries(schema.properties ?? {})) {
    if (required.has(field)) {
      const { [field]: _omitted, ...rest } = example;
      out.push({ field, why: 'required', input: rest });
    }
    const { base, nullable } = unwrapNullable(prop);
    if (!nullable && c.method === 'POST' && Object.keys(base).length > 0) {
      out.push({ field, why: 'not nullable', input: { ...example, [field]: null } });
    }
    for (const bad of badValues(base, c.method)) {
      out.push({ field, why: bad.why, input: { ...example, [field]: bad.value } });
    }
  }
  return out;
}
