import { describe, expect, it } from 'vitest';
import { composeServiceNames, parseCompose, serializeCompose } from './compose-file.js';
import { KITCHEN_SINK, SWARM_STACK, WORDPRESS } from './test-fixtures.js';
import { ComposeError } from './yaml-nodes.js';

const refuse = (text: string) => () => parseCompose(text);

describe('parseCompose / serializeCompose', () => {
  it.each([
    ['wordpress', WORDPRESS],
    ['kitchen sink', KITCHEN_SINK],
    ['swarm stack', SWARM_STACK],
  ])('writes the %s file back exactly as it was read', (_name, text) => {
    expect(serializeCompose(parseCompose(text))).toBe(text);
  });

  it('keeps scalars as written, whatever a YAML 1.1 or 1.2 reader would make of them', () => {
    const text = [
      'services:',
      '  app:',
      '    image: x',
      '    environment:',
      '      A: yes',
      '      B: on',
      '      C: 0440',
      '      D: 1:30',
      '      E: ~',
      '      F: null',
      '      G: 1_000',
      '      H: 0x1F',
      "      I: 'single'",
      '      J: "double"',
      '      K:',
      '    ports:',
      '      - 22:22',
      '    command: |',
      '      echo "a: b"',
      '      exit 0',
      '',
    ].join('\n');
    expect(serializeCompose(parseCompose(text))).toBe(text);
  });

  it('keeps comments, anchors, aliases, merge keys, flow style and custom tags', () => {
    const text = [
      '# head comment',
      'x-env: &env',
      '  TZ: UTC # trailing',
      'services:',
      '  a:',
      '    image: x',
      '    environment: *env',
      '    networks: [one, two]',
      '    labels: {a: b}',
      '    volumes: !reset []',
      '    ports: !override',
      '      - "80:80"',
      '  b:',
      '    <<: [*env]',
      '    image: y',
      '',
    ].join('\n');
    expect(serializeCompose(parseCompose(text))).toBe(text);
  });

  it('writes nulls the document holds as nothing', () => {
    const out = serializeCompose(parseCompose('services:\n  a:\n    image: x\nvolumes: {data}\n'));
    expect(out).toBe('services:\n  a:\n    image: x\nvolumes: {data}\n');
  });

  it('does not fold long lines', () => {
    const long = `services:\n  a:\n    image: x\n    command: ${'word '.repeat(60).trim()}\n`;
    expect(serializeCompose(parseCompose(long))).toBe(long);
  });

  it('ComposeFile.toString is serializeCompose', () => {
    const file = parseCompose(WORDPRESS);
    expect(file.toString()).toBe(serializeCompose(file));
  });

  it('accepts a file without services (include only) and services given as an empty value', () => {
    expect(composeServiceNames(parseCompose('include:\n  - other.yml\n'))).toEqual([]);
    expect(composeServiceNames(parseCompose('services:\n'))).toEqual([]);
    expect(composeServiceNames(parseCompose('services: {}\nvolumes:\n  data:\n'))).toEqual([]);
  });

  it('accepts the usual empty resource definitions', () => {
    expect(() => parseCompose('services:\n  a: {image: x}\nvolumes:\n  data:\n  other: {}\nnetworks:\n  n:\n')).not.toThrow();
  });

  describe('refuses what is not a compose file, with the reason', () => {
    it.each([
      ['', 'the compose file is empty'],
      ['# only a comment\n', 'the compose file is empty'],
      ['- a\n- b\n', 'must be a mapping'],
      ['just text\n', 'must be a mapping'],
      ['services:\n  - web\n', '`services` (service names to their definitions) must be a mapping'],
      ['services: web\n', '`services` (service names to their definitions) must be a mapping'],
      ['services:\n  web: nginx\n', 'service "web" must be a mapping'],
      ['services:\n  web:\n', 'service "web" must be a mapping'],
      ['services:\n  web: [a]\n', 'service "web" must be a mapping'],
      ['services: {}\nvolumes: [data]\n', '`volumes` must be a mapping'],
      ['services: {}\nnetworks:\n  n: bridge\n', 'networks "n" must be a mapping or empty'],
      ['services: {}\nsecrets:\n  s: [x]\n', 'secrets "s" must be a mapping or empty'],
      ['services: {}\n---\nservices: {}\n', 'one YAML document; this text has 2'],
      ['services:\n  a: {image: x\n', 'invalid YAML'],
      ['services:\n  a:\n    image: x\n    image: y\n', 'invalid YAML'],
      ['services:\n  a:\n    <<: *missing\n', 'invalid YAML'],
      ['x: &a hello\nservices:\n  a:\n    <<: *a\n', 'Merge sources must be maps'],
    ])('%j', (text, reason) => {
      expect(refuse(text)).toThrow(ComposeError);
      expect(refuse(text)).toThrow(reason);
    });

    it('an alias bomb', () => {
      const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 9; i += 1) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
      lines.push('services: {}');
      expect(refuse(lines.join('\n'))).toThrow(/aliases too far|invalid YAML/);
    });
  });
});

describe('composeServiceNames', () => {
  it('lists the services in file order', () => {
    expect(composeServiceNames(WORDPRESS)).toEqual(['wordpress', 'db']);
    expect(composeServiceNames(KITCHEN_SINK)).toEqual(['web', 'api', 'worker', 'sidecar', 'base', 'cache']);
  });

  it('names services merged into the services mapping and keeps names as written', () => {
    const text = 'x: &more\n  extra: {image: z}\nservices:\n  <<: *more\n  "on": {image: x}\n  1e3: {image: y}\n';
    expect(composeServiceNames(text)).toEqual(['on', '1e3', 'extra']);
  });
});
