import { contracts } from '@skiff/contracts';
import { ControlReply } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../errors.js';
import { proxyAnswer } from './proxy-requests.js';

const reply = (fields: Partial<ControlReply>): ControlReply => ({ ...ControlReply.fromPartial({}), ...fields });

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('an agent reply to a proxy request', () => {
  it('answers the parsed result when it has the expected shape', () => {
    const tree = [{ name: 'global.json', path: '/var/lib/skiff/proxy/config/global.json', type: 'file' }];
    expect(proxyAnswer('srv_1', reply({ proxy: { resultJson: JSON.stringify(tree), refusedField: '' } }), contracts.settings.readDirectories.output)).toEqual(tree);
    expect(proxyAnswer('local', reply({ proxy: { resultJson: '"{}\\n"', refusedField: '' } }), z.string())).toBe('{}\n');
  });

  it('names the API field of a refused request field', () => {
    for (const [refused, field] of [['content', 'proxyConfig'], ['path', 'path'], ['enable_dashboard', 'enableDashboard']]) {
      const err = failure(() => proxyAnswer('srv_1', reply({ error: `bad ${refused}`, proxy: { resultJson: '', refusedField: refused! } }), z.object({})));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.issues).toEqual([{ path: [field], message: `bad ${refused}` }]);
    }
  });

  it('reports any other failure as agent trouble on that server, naming no field', () => {
    const err = failure(() => proxyAnswer('srv_1', reply({ error: 'the proxy container cannot start', proxy: { resultJson: '', refusedField: '' } }), z.object({})));
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.issues).toEqual([]);
    expect(err.message).toBe('The proxy of server srv_1 did not do it: its agent says the proxy container cannot start');
    const local = failure(() => proxyAnswer('local', reply({ error: 'no', proxy: undefined }), z.object({})));
    expect(local.message).toContain('server local (the platform host)');
  });

  it('refuses answers that are missing, not JSON, or of the wrong shape', () => {
    expect(failure(() => proxyAnswer('srv_1', reply({}), z.object({}))).message).toContain('gave no answer');
    expect(failure(() => proxyAnswer('srv_1', reply({ proxy: { resultJson: '{', refusedField: '' } }), z.object({}))).message).toContain('not JSON');
    const dashboard = contracts.settings.toggleDashboard.output;
    expect(failure(() => proxyAnswer('srv_1', reply({ proxy: { resultJson: '{"enabled":"yes"}', refusedField: '' } }), dashboard)).message).toContain('wrong shape');
  });
});
