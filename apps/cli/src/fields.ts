import { z } from 'zod';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  description?: string;
};

export type Kind = 'string' | 'number' | 'boolean' | 'array' | 'json';

/** One input field of an operation, as the CLI offers it. */
export interface Field {
  name: string;
  flag: string;
  kind: Kind;
  /** For arrays: the kind of their items. */
  items?: Kind;
  nullable: boolean;
  required: boolean;
  choices?: string[];
  type: string;
  description?: string;
}

/** `applicationId` → `application-id`, `healthCheckCluster` → `health-check-cluster`. */
export const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])([A-Z][a-z])/g, '$1-$2').toLowerCase();

function variants(s: JsonSchema): JsonSchema[] {
  const list = s.anyOf ?? s.oneOf;
  return list ? list.flatMap(variants) : [s];
}

function typeNames(s: JsonSchema): string[] {
  return variants(s).flatMap((v) => {
    if (v.enum) return v.enum.map((e) => JSON.stringify(e));
    if (v.const !== undefined) return [JSON.stringify(v.const)];
    if (v.type === 'array') return [`${typeNames(v.items ?? {}).join('|') || 'any'}[]`];
    return Array.isArray(v.type) ? v.type : v.type ? [v.type] : ['any'];
  });
}

function kindOf(s: JsonSchema): Kind {
  const kinds = new Set(
    variants(s)
      .filter((v) => v.type !== 'null')
      .map((v): Kind => {
        const t = Array.isArray(v.type) ? v.type.find((x) => x !== 'null') : v.type;
        if (t === 'integer' || t === 'number') return 'number';
        if (t === 'string' || (v.enum && v.enum.every((e) => typeof e === 'string'))) return 'string';
        if (t === 'boolean' || t === 'array') return t;
        return 'json';
      }),
  );
  return kinds.size === 1 ? [...kinds][0]! : 'json';
}

const cache = new WeakMap<z.ZodType, Field[]>();

/** The fields of an operation's input, from its contract's schema (JSON Schema, as clients send it). */
export function fieldsOf(schema: z.ZodType): Field[] {
  let fields = cache.get(schema);
  if (fields) return fields;
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const required = new Set(json.required ?? []);
  fields = Object.entries(json.properties ?? {}).map(([name, s]) => {
    const kind = kindOf(s);
    const arrays = variants(s).filter((v) => v.type === 'array');
    const choices = variants(s).flatMap((v) => (v.enum ?? []).filter((e): e is string => typeof e === 'string'));
    return {
      name,
      flag: kebab(name),
      kind,
      items: kind === 'array' ? kindOf(arrays[0]?.items ?? {}) : undefined,
      nullable: variants(s).some((v) => v.type === 'null' || (Array.isArray(v.type) && v.type.includes('null'))),
      required: required.has(name),
      choices: choices.length ? choices : undefined,
      type: [...new Set(typeNames(s))].join(' | '),
      description: s.description ?? variants(s).find((v) => v.description)?.description,
    };
  });
  cache.set(schema, fields);
  return fields;
}
