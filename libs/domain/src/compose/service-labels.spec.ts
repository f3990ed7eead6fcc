import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serializeCompose } from './compose-file.js';
import { labelComposeServices, withStackVersion } from './service-labels.js';

const LABELS = { 'skiff.managed': 'true', 'skiff.kind': 'compose', 'skiff.id': 'cmp1' };
const label = (text: string, swarm = false) => serializeCompose(labelComposeServices(text, LABELS, { swarm }));

describe('labelComposeServices', () => {
  it('adds a labels mapping with string values, keeping the rest as written', () => {
    const text = `# my stack
services:
  web:
    image: nginx # the web
  db:
    image: postgres
`;
    const out = label(text);
    expect(out).toContain('# my stack');
    expect(out).toContain('image: nginx # the web');
    expect(out).toContain('skiff.managed: "true"');
    expect(parse(out).services).toEqual({
      web: { image: 'nginx', labels: LABELS },
      db: { image: 'postgres', labels: LABELS },
    });
  });

  it('keeps the list form, and its own labels win over the file’s', () => {
    const out = label(`services:
  web:
    image: x
    labels:
      - app=web
      - skiff.id=someone-else
      - skiff.managed
`);
    expect(parse(out).services.web.labels).toEqual(['app=web', 'skiff.managed=true', 'skiff.kind=compose', 'skiff.id=cmp1']);
  });

  it('overrides mapping entries of the file and leaves its other labels', () => {
    const out = label(`services:
  web:
    image: x
    labels: { app: web, skiff.kind: application }
`);
    expect(parse(out).services.web.labels).toEqual({ app: 'web', 'skiff.kind': 'compose', 'skiff.managed': 'true', 'skiff.id': 'cmp1' });
  });

  it('copies labels a service shares through an anchor or a merge key before changing them', () => {
    const out = label(`x-common: &common
  labels: &labels
    team: a
services:
  web:
    <<: *common
    image: x
  api:
    image: y
    labels: *labels
`);
    const parsed = parse(out, { merge: true });
    expect(parsed['x-common'].labels).toEqual({ team: 'a' });
    expect(parsed.services.web.labels).toEqual({ team: 'a', ...LABELS });
    expect(parsed.services.api.labels).toEqual({ team: 'a', ...LABELS });
  });

  it('puts them under deploy.labels too for a Swarm stack, creating deploy when absent', () => {
    const out = label(
      `services:
  web:
    image: x
  api:
    image: y
    deploy:
      replicas: 2
      labels: [a=b]
`,
      true,
    );
    const services = parse(out).services;
    expect(services.web).toEqual({ image: 'x', labels: LABELS, deploy: { labels: LABELS } });
    expect(services.api.deploy).toEqual({ replicas: 2, labels: ['a=b', 'skiff.managed=true', 'skiff.kind=compose', 'skiff.id=cmp1'] });
  });

  it('is idempotent', () => {
    const text = `services:\n  web:\n    image: x\n    labels: [a=b]\n    deploy: {}\n`;
    const once = label(text, true);
    expect(label(once, true)).toBe(once);
  });

  it('refuses labels that are neither a list nor a mapping', () => {
    expect(() => label(`services:\n  web:\n    image: x\n    labels: oops\n`)).toThrow('the labels of service "web" must be a list or a mapping');
  });
});

describe('withStackVersion', () => {
  it('adds version "3.9" on top when the file has none', () => {
    const out = serializeCompose(withStackVersion('services:\n  web:\n    image: x\n'));
    expect(out.startsWith('version: "3.9"\n')).toBe(true);
    expect(parse(out).version).toBe('3.9');
  });

  it('leaves a version the file sets', () => {
    const text = 'version: "3.4"\nservices:\n  web:\n    image: x\n';
    expect(serializeCompose(withStackVersion(text))).toBe(text);
  });
});
