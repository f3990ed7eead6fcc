import { readFileSync } from 'node:fs';
import { allContracts } from '@skiff/contracts';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../version.js';
import { buildOpenApiDocument } from './openapi.js';

const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const checkedIn = JSON.parse(readFileSync(new URL('../../../../docs/openapi.json', import.meta.url), 'utf8'));

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument(version) as { paths: Record<string, Record<string, any>> };

  it('carries the version of the package', () => {
    expect(VERSION).toBe(version);
  });

  it('matches the checked-in docs/openapi.json (run `npm run gen:openapi` after changing a contract)', () => {
    expect(checkedIn).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it('documents every operation with its method, inputs and error answers', () => {
    expect(Object.keys(doc.paths)).toHaveLength(allContracts.length);
    const one = doc.paths['/api/project.one']!.get;
    expect(one.parameters).toEqual([expect.objectContaining({ name: 'projectId', in: 'query', required: true })]);
    expect(Object.keys(one.responses)).toContain('404');
    const create = doc.paths['/api/project.create']!.post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(Object.keys(create.responses)).not.toContain('404');
    expect(doc.paths['/api/organization.acceptInvitation']!.post.security).toEqual([]);
  });
});
