import { describe, expect, it } from 'vitest';
import { SUGGESTION_COUNT, deployableProblem, suggestionsOf } from './suggestions.js';

const raw = (overrides: Record<string, unknown> = {}) => ({
  id: 'web',
  name: 'Web',
  shortDescription: ' A page. ',
  dockerCompose: 'services:\n  web:\n    image: nginx:1.27\n',
  envVariables: '',
  domains: [],
  configFiles: [],
  ...overrides,
});
const ok = () => null;

describe('suggestionsOf', () => {
  it('answers why when the answer has no list', () => {
    expect(suggestionsOf({ other: [] }, ok)).toEqual({ kept: [], dropped: ['the answer has no "suggestions" list'] });
    expect(suggestionsOf(null, ok).kept).toEqual([]);
  });

  it('maps to ai.deploy fields, makes ids slugs and unique, keeps at most the count asked for', () => {
    const list = Array.from({ length: 5 }, () => raw({ id: 'My Web!' }));
    const { kept, dropped } = suggestionsOf({ suggestions: list }, ok);
    expect(dropped).toEqual([]);
    expect(kept.map((s) => s.id)).toEqual(['my-web', 'my-web-2', 'my-web-3']);
    expect(kept).toHaveLength(SUGGESTION_COUNT);
    expect(kept[0]).toEqual({ id: 'my-web', name: 'Web', description: 'A page.', containerCompose: raw().dockerCompose, envVariables: '', domains: [], configFiles: [] });
  });

  it('drops a suggestion missing a field, naming it', () => {
    const { kept, dropped } = suggestionsOf({ suggestions: [raw({ dockerCompose: undefined }), raw()] }, ok);
    expect(kept).toHaveLength(1);
    expect(dropped).toEqual([expect.stringMatching(/^suggestion 1: dockerCompose: /)]);
  });
});

describe('deployableProblem', () => {
  const options = { appName: 'web-abc123', allowHostPrivileges: false };
  const deployable = { containerCompose: raw().dockerCompose, envVariables: 'A=1' };

  it('accepts a file that converts, and names the field of each problem', () => {
    expect(deployableProblem(deployable, options)).toBeNull();
    expect(deployableProblem({ ...deployable, containerCompose: 'volumes: {}\n' }, options)?.field).toBe('containerCompose');
    expect(deployableProblem({ ...deployable, containerCompose: 'services:\n  web:\n    image: x\n    volumes: ["/etc:/host"]\n' }, options)?.field).toBe('containerCompose');
    expect(deployableProblem({ ...deployable, containerCompose: 'services:\n  web:\n    image: x\n    volumes: ["/etc:/host"]\n' }, { ...options, allowHostPrivileges: true })).toBeNull();
    expect(deployableProblem({ ...deployable, envVariables: '1BAD=x' }, options)).toMatchObject({ field: 'envVariables', message: expect.stringMatching(/^line 1: /) });
    expect(deployableProblem({ ...deployable, domains: [{ host: '*.example.com', serviceName: 'web' }] }, options)?.field).toBe('domains');
    expect(deployableProblem({ ...deployable, domains: [{ host: 'a.example.com', port: 70000, serviceName: 'web' }] }, options)?.field).toBe('domains');
    expect(deployableProblem({ ...deployable, domains: [{ host: 'a.example.com', serviceName: 'web', path: 'no-slash' }] }, options)?.field).toBe('domains');
    expect(deployableProblem({ ...deployable, configFiles: [{ filePath: 'conf/a.conf', content: '' }] }, options)).toBeNull();
    expect(deployableProblem({ ...deployable, configFiles: [{ filePath: 'conf/../../a.conf', content: '' }] }, options)?.field).toBe('configFiles');
    expect(deployableProblem({ ...deployable, configFiles: [{ filePath: 'docker-compose.yml', content: '' }] }, options)?.field).toBe('configFiles');
  });
});
