import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldKind, inputJsonSchema, variantsOf } from './input-schema.js';

describe('input schema', () => {
  const schema = z.object({
    n: z.number().int().nullable(),
    on: z.boolean().optional(),
    tags: z.array(z.string()),
    mode: z.enum(['a', 'b']),
    either: z.union([z.string(), z.object({ a: z.string() })]),
    nested: z.union([z.union([z.string(), z.null()]), z.literal('x')]),
    spec: z.object({ a: z.string() }),
  });

  it('is computed once per schema', () => {
    expect(inputJsonSchema(schema)).toBe(inputJsonSchema(schema));
  });

  it('gives each field the one kind its non-null alternatives share, json otherwise', () => {
    const props = inputJsonSchema(schema).properties!;
    expect(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fieldKind(v)]))).toEqual({
      n: 'number', on: 'boolean', tags: 'array', mode: 'string', either: 'json', nested: 'string', spec: 'json',
    });
    expect(fieldKind({ enum: ['a', 'b'] })).toBe('string');
    expect(fieldKind({ type: ['null', 'integer'] })).toBe('number');
  });

  it('flattens nested alternatives', () => {
    expect(variantsOf({ anyOf: [{ oneOf: [{ type: 'string' }, { type: 'null' }] }, { type: 'number' }] })).toEqual([
      { type: 'string' }, { type: 'null' }, { type: 'number' },
    ]);
  });
});
