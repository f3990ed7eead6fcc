import { describe, expect, it, vi } from 'vitest';
import { duplicateKeyPath } from './json-body.js';

describe('duplicateKeyPath', () => {
  it('names the first key given twice in an object, at any depth', () => {
    expect(duplicateKeyPath('{"a":1,"b":{"c":[1,{"d":2,"d":3}]}}')).toEqual(['b', 'c', 1, 'd']);
    expect(duplicateKeyPath('{"a":"a","b":["a","a"],"c":{"a":1},"d":{"a":1}}')).toBeNull();
    expect(duplicateKeyPath('{"x\\"y":1,"x\\u0022y":2}')).toEqual(['x"y']);
    expect(duplicateKeyPath('{"a":{},"a":[]}')).toEqual(['a']);
    expect(duplicateKeyPath('[{"k":1},{"k":2}]')).toBeNull();
  });

  it('finds where a string ends past escaped quotes and backslashes', () => {
    expect(duplicateKeyPath('{"a\\\\":"\\"{","a\\\\":1}')).toEqual(['a\\']);
    expect(duplicateKeyPath('{"s":"}\\",\\"s\\":{","t":1}')).toBeNull();
    expect(duplicateKeyPath('{"s":"\\\\\\"","s":2}')).toEqual(['s']);
  });

  it('decodes only the keys that hold an escape (the others are their text)', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const body = JSON.stringify(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}`, { value: `v"${i}` }])));
      expect(duplicateKeyPath(body)).toBeNull();
      expect(duplicateKeyPath('{"k\\u0061":1,"ka":2}')).toEqual(['ka']);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('walks a deeply nested text without recursion', () => {
    const deep = `${'['.repeat(100_000)}{"k":1,"k":2}${']'.repeat(100_000)}`;
    expect(duplicateKeyPath(deep)?.at(-1)).toBe('k');
  });
});
