import { describe, expect, it } from 'vitest';
import { interleave } from './test-groups.js';

describe('the order of the two groups', () => {
  it('keeps the serial files in order and spreads the parallel ones evenly between them', () => {
    expect(interleave(['S1', 'S2', 'S3'], ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'])).toEqual(['S1', 'p1', 'p2', 'S2', 'p3', 'p4', 'S3', 'p5', 'p6', 'p7']);
    expect(interleave(['S1', 'S2', 'S3'], ['p1'])).toEqual(['S1', 'S2', 'S3', 'p1']);
    expect(interleave([], ['p1', 'p2'])).toEqual(['p1', 'p2']);
    expect(interleave(['S1'], [])).toEqual(['S1']);
  });
});
