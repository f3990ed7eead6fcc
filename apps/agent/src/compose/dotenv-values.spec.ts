import { formatComposeDotenv } from '@skiff/domain';
import { describe, expect, it } from 'vitest';
import { readComposeDotenv } from './dotenv-values.js';

describe('readComposeDotenv', () => {
  it('reads back exactly what formatComposeDotenv wrote', () => {
    const variables = new Map([
      ['PLAIN', 'abc-1.2:3'],
      ['EMPTY', ''],
      ['SPACES', 'a b  c'],
      ['QUOTE', "it's"],
      ['DOLLAR', 'pa$$word ${X}'],
      ['BOTH', 'a\'b\\c"d'],
      ['PEM', '-----BEGIN KEY-----\nabc\n-----END KEY-----\n'],
      ['EQUALS', 'a=b=c'],
    ]);
    expect(readComposeDotenv(formatComposeDotenv(variables))).toEqual(variables);
  });

  it('skips lines that are no assignments', () => {
    expect(readComposeDotenv('# comment\n\nA=1\nnot a line\n9X=no\n')).toEqual(new Map([['A', '1']]));
  });
});
