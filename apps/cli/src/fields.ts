import { type FieldKind, type JsonSchema, fieldKind as kindOf, inputJsonSchema, variantsOf as variants } from '@skiff/contracts';
import type { z } from 'zod';

export type Kind = FieldKind;

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

function typeNames(s: JsonSchema): string[] {
  return variants(s).flatMap((v) => {
    if (v.enum) return v.enum.map((e) => JSON.stringify(e));
    if (v.const !== undefined) return [JSON.stringify(v.const)];
    if (v.type === 'array') return [`${typeNames(v.items ?? {}).join('|') || 'any'}[]`];
    return Array.isArray(v.type) ? v.type : v.type ? [v.type] : ['any'];
  });
}

const cache = new WeakMap<z.ZodType, Field[]>();

/** The fields of an operation's input, from its contract's schema (JSON Schema, as clients send it). */
export function fieldsOf(schema: z.ZodType): Field[] {
  let fields = cache.get(schema);
  if (fields) return fields;
  const json = inputJsonSchema(schema);
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
