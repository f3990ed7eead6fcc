import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { inputFromQuery } from './input-shape.js';

const schema = z.object({
  id: z.string(),
  count: z.number().optional(),
  flag: z.boolean().optional(),
  tags: z.array(z.string()).optional(),
  maybe: z.string().nullable().optional(),
});
const parse = (q: string) => inputFromQuery(schema, new URLSearchParams(q));

describe('inputFromQuery', () => {
  it('takes one parameter per field and ignores unknown ones', () => {
    expect(parse('id=a&other=b')).toEqual({ id: 'a' });
  });
  it('parses true/false and numbers strictly, passing anything else on as text', () => {
    expect(parse('id=a&flag=true&count=42')).toEqual({ id: 'a', flag: true, count: 42 });
    expect(parse('id=a&flag=1&count=4x')).toEqual({ id: 'a', flag: '1', count: '4x' });
    expect(parse('count=-1.5').count).toBe(-1.5);
    expect(parse('count=01').count).toBe('01');
    expect(parse('count=1e3').count).toBe('1e3');
  });
  it('makes lists of repeated parameters, and of a single one for list fields', () => {
    expect(parse('tags=a&tags=b').tags).toEqual(['a', 'b']);
    expect(parse('tags=a').tags).toEqual(['a']);
  });
  it('passes repeated values of a single field on as a list, for the contract to refuse', () => {
    expect(parse('id=a&id=b').id).toEqual(['a', 'b']);
    expect(schema.safeParse(parse('id=a&id=b')).success).toBe(false);
  });
  it('keeps strings as they are', () => {
    expect(parse('id=true&maybe=12').id).toBe('true');
    expect(parse('maybe=12').maybe).toBe('12');
  });
});
