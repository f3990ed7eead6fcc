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

  it('refers only to what it holds: every $ref resolves in the document, no $defs are left in operations', () => {
    const full = buildOpenApiDocument(version) as any;
    const refs: string[] = [];
    const defs: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${where}/${i}`));
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else if (key === '$defs') defs.push(where);
          walk(value, `${where}/${key}`);
        }
      }
    };
    walk(full, '#');
    const resolves = (ref: string) =>
      ref.startsWith('#/') && ref.slice(2).split('/').reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], full) !== undefined;
    expect(defs).toEqual([]);
    expect([...new Set(refs)].filter((ref) => !resolves(ref))).toEqual([]);
    // The recursive schemas are named components, shared by the operations that use them.
    expect(refs).toContain('#/components/schemas/JsonValue');
    expect(refs).toContain('#/components/schemas/ProxyFileNode');
  });

  it('names its server, relative to where it is served, and a key for every operation that needs one', () => {
    const full = buildOpenApiDocument(version) as any;
    expect(full.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(full.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(allContracts.length);
  });

  it('closes input objects to fields they do not list, as the API refuses them', () => {
    const create = doc.paths['/api/project.create']!.post.requestBody.content['application/json'].schema;
    expect(create.additionalProperties).toBe(false);
    // A record (labels: any key) keeps its value schema.
    const update = doc.paths['/api/application.update']!.post.requestBody.content['application/json'].schema;
    expect(update.additionalProperties).toBe(false);
    expect(update.properties.labelsCluster.anyOf[0].additionalProperties).toEqual({ type: 'string' });
  });

  it('speaks to a reader who never read a spec: no text of it names "the spec"', () => {
    const texts: Array<[string, string]> = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${where}[${i}]`));
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if ((key === 'description' || key === 'summary') && typeof value === 'string') texts.push([`${where}.${key}`, value]);
          else walk(value, `${where}.${key}`);
        }
      }
    };
    walk(buildOpenApiDocument(version), '');
    expect(texts.length).toBeGreaterThan(500);
    expect(texts.filter(([, text]) => /\bthe spec|\bspec's|\bspecification\b/i.test(text)).map(([where]) => where)).toEqual([]);
  });

  it('says what each router is, the generic names included (forgeA GitHub, dbA PostgreSQL, pack_one Nixpacks, hook…)', () => {
    const tags = (buildOpenApiDocument(version) as { tags: Array<{ name: string; description?: string }> }).tags;
    expect(tags.filter((t) => !t.description).map((t) => t.name)).toEqual([]);
    const text = JSON.stringify(buildOpenApiDocument(version));
    for (const words of [
      'forgeA GitHub', 'forgeB GitLab', 'forgeC Bitbucket', 'forgeD Gitea or Forgejo',
      'dbA PostgreSQL', 'dbB MariaDB', 'dbC MySQL', 'dbD MongoDB', 'dbE libSQL',
      'pack_one (Nixpacks)', 'pack_two (Railpack)', 'legacy_buildpacks (Heroku buildpacks', 'cloudnative_buildpacks (Paketo buildpacks',
      'hook (a Slack-style incoming webhook)', 'messenger (a Telegram bot)', 'community (a Discord webhook)', 'email (SMTP)', 'push (a Gotify server)',
    ]) {
      expect(text, words).toContain(words);
    }
    // The enums carry the words where their fields are, e.g. application.saveBuildType's buildType.
    const buildType = (buildOpenApiDocument(version) as any).paths['/api/application.saveBuildType'].post.requestBody.content['application/json'].schema.properties.buildType;
    expect(buildType.description).toContain('pack_one (Nixpacks)');
  });
});

