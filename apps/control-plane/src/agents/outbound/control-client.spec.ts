import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../errors.js';
import { agentResult } from './control-client.js';

const trouble = (what: string) => new DomainError('BAD_REQUEST', `its agent ${what}`);

describe('agentResult', () => {
  it('answers the JSON result when it has the expected shape', () => {
    expect(agentResult('{"n":1}', z.object({ n: z.number() }), trouble)).toEqual({ n: 1 });
  });

  it('makes the caller\'s error of an answer that is not JSON, or of the wrong shape', () => {
    expect(() => agentResult('{', z.object({}), trouble)).toThrow('its agent answered something that is not JSON');
    expect(() => agentResult('{"n":"1"}', z.object({ n: z.number() }), trouble)).toThrow('its agent answered something of the wrong shape');
  });
});
