import { describe, expect, it } from 'vitest';
import { operationsOf, resolve, typesOf } from './operations.js';

describe('the operations of a document', () => {
  const named = { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/components/schemas/Json' } }] };
  const [op] = operationsOf({
    paths: {
      '/api/thing.save': {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { value: { $ref: '#/components/schemas/Json' } } } } } },
          responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Json' } } } } },
        },
      },
    },
    components: { schemas: { Json: named } },
  });

  it('resolves references to the named schemas of the document (components/schemas)', () => {
    expect(op!.name).toBe('thing.save');
    expect(resolve(op!.input.properties!.value!, op!.input)).toEqual(named);
    expect(typesOf(op!.output, op!.output)).toEqual(new Set(['string', 'array']));
  });
});
