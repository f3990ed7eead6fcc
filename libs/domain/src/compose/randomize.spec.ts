/**
 * randomizeCompose. Golden files: libs/domain/src/golden/compose/randomize-*.yml; after an
 * intended change, `UPDATE_GOLDEN=1 npx vitest run libs/domain/src/compose` and review the diff.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCompose, serializeCompose } from './compose-file.js';
import { randomizeCompose, randomizedName } from './randomize.js';
import { expectGolden, KITCHEN_SINK, SWARM_STACK, WORDPRESS } from './test-fixtures.js';
import { ComposeError } from './yaml-nodes.js';

const S = 'k3x9';
const randomize = (text: string, suffix = S) => serializeCompose(randomizeCompose(text, suffix));
/** The randomized file as data (YAML 1.2 core schema, as Compose v2 reads it). */
const data = (text: string, suffix = S) => parse(randomize(text, suffix), { merge: true }) as Record<string, any>;
const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('randomizeCompose', () => {
  it('golden: wordpress', () => expectGolden('randomize-wordpress.yml', randomize(WORDPRESS)));
  it('golden: kitchen sink', () => expectGolden('randomize-kitchen-sink.yml', randomize(KITCHEN_SINK)));
  it('golden: swarm stack', () => expectGolden('randomize-swarm-stack.yml', randomize(SWARM_STACK)));

  it.each([
    ['wordpress', WORDPRESS],
    ['kitchen sink', KITCHEN_SINK],
    ['swarm stack', SWARM_STACK],
  ])('is idempotent: %s randomized twice with the same suffix equals once', (_n, text) => {
    const once = randomize(text);
    expect(randomize(once)).toBe(once);
  });

  it('does not change the file it is given', () => {
    const file = parseCompose(KITCHEN_SINK);
    randomizeCompose(file, S);
    expect(serializeCompose(file)).toBe(KITCHEN_SINK);
  });

  it('renames services and container names', () => {
    const out = data(lines('services:', '  web:', '    image: x', '    container_name: shop-web', '  db:', '    image: y'));
    expect(Object.keys(out.services)).toEqual([`web-${S}`, `db-${S}`]);
    expect(out.services[`web-${S}`].container_name).toBe(`shop-web-${S}`);
  });

  it('follows depends_on as a list and as a map (keeping conditions)', () => {
    const out = data(
      lines(
        'services:',
        '  a: {image: x, depends_on: [b, c]}',
        '  b:',
        '    image: x',
        '    depends_on:',
        '      c: {condition: service_healthy, restart: true}',
        '  c: {image: x}',
      ),
    );
    expect(out.services[`a-${S}`].depends_on).toEqual([`b-${S}`, `c-${S}`]);
    expect(out.services[`b-${S}`].depends_on).toEqual({ [`c-${S}`]: { condition: 'service_healthy', restart: true } });
  });

  it('follows links with and without aliases', () => {
    const out = data(lines('services:', '  web: {image: x, links: ["db:database", cache]}', '  db: {image: y}', '  cache: {image: z}'));
    expect(out.services[`web-${S}`].links).toEqual([`db-${S}:database`, `cache-${S}`]);
  });

  it('follows volumes_from services but not containers', () => {
    const out = data(
      lines('services:', '  a: {image: x, volumes_from: [b, "b:ro", "container:c1", "container:c2:rw"]}', '  b: {image: y}'),
    );
    expect(out.services[`a-${S}`].volumes_from).toEqual([`b-${S}`, `b-${S}:ro`, 'container:c1', 'container:c2:rw']);
  });

  it('follows extends within the file (string and mapping), not into another file', () => {
    const out = data(
      lines(
        'services:',
        '  base: {image: x}',
        '  a: {extends: base}',
        '  b: {extends: {service: base}}',
        '  c: {extends: {file: common.yml, service: base}}',
      ),
    );
    expect(out.services[`a-${S}`].extends).toBe(`base-${S}`);
    expect(out.services[`b-${S}`].extends).toEqual({ service: `base-${S}` });
    expect(out.services[`c-${S}`].extends).toEqual({ file: 'common.yml', service: 'base' });
  });

  it('follows network_mode, pid and ipc service: references, not container: or host', () => {
    const out = data(
      lines(
        'services:',
        '  a: {image: x}',
        '  b: {image: x, network_mode: "service:a", pid: "service:a", ipc: "service:a"}',
        '  c: {image: x, network_mode: "container:other", pid: host, ipc: shareable}',
      ),
    );
    expect(out.services[`b-${S}`]).toMatchObject({ network_mode: `service:a-${S}`, pid: `service:a-${S}`, ipc: `service:a-${S}` });
    expect(out.services[`c-${S}`]).toMatchObject({ network_mode: 'container:other', pid: 'host', ipc: 'shareable' });
  });

  it('follows build secrets and service: build contexts (map and list forms)', () => {
    const out = data(
      lines(
        'services:',
        '  base: {image: x}',
        '  a:',
        '    build:',
        '      context: .',
        '      secrets: [tok, {source: tok, target: t}]',
        '      additional_contexts: {b: "service:base", c: "docker-image://alpine"}',
        '  b:',
        '    build:',
        '      context: .',
        '      additional_contexts: ["b=service:base", "c=./dir"]',
        'secrets:',
        '  tok: {file: ./t}',
      ),
    );
    expect(out.services[`a-${S}`].build.secrets).toEqual([`tok-${S}`, { source: `tok-${S}`, target: 't' }]);
    expect(out.services[`a-${S}`].build.additional_contexts).toEqual({ b: `service:base-${S}`, c: 'docker-image://alpine' });
    expect(out.services[`b-${S}`].build.additional_contexts).toEqual([`b=service:base-${S}`, 'c=./dir']);
  });

  describe('volumes', () => {
    const text = lines(
      'services:',
      '  a:',
      '    image: x',
      '    volumes:',
      '      - data:/data',
      '      - data:/ro:ro',
      '      - data:/z:rw,z',
      '      - ./local:/local',
      '      - /abs:/abs:ro',
      '      - ~/home:/home',
      '      - $PWD/x:/x',
      '      - ${DIR}:/dir',
      '      - /anonymous',
      '      - undeclared:/u',
      '      - shared:/shared',
      '      - type: volume',
      '        source: data',
      '        target: /long',
      '        read_only: true',
      '      - source: data',
      '        target: /no-type',
      '      - type: bind',
      '        source: data',
      '        target: /bind-named-like-a-volume',
      '      - type: tmpfs',
      '        target: /tmp',
      'volumes:',
      '  data:',
      '  shared:',
      '    external: true',
    );

    it('renames named volumes in short and long syntax, keeping targets and modes', () => {
      const out = data(text);
      expect(out.services[`a-${S}`].volumes).toEqual([
        `data-${S}:/data`,
        `data-${S}:/ro:ro`,
        `data-${S}:/z:rw,z`,
        './local:/local',
        '/abs:/abs:ro',
        '~/home:/home',
        '$PWD/x:/x',
        '${DIR}:/dir',
        '/anonymous',
        'undeclared:/u',
        'shared:/shared',
        { type: 'volume', source: `data-${S}`, target: '/long', read_only: true },
        { source: `data-${S}`, target: '/no-type' },
        { type: 'bind', source: 'data', target: '/bind-named-like-a-volume' },
        { type: 'tmpfs', target: '/tmp' },
      ]);
      expect(Object.keys(out.volumes)).toEqual([`data-${S}`, 'shared']);
    });

    it('suffixes an explicit volume name, not an external one', () => {
      const out = data(
        lines(
          'services:',
          '  a: {image: x, volumes: ["db:/db", "old:/old", "legacy:/legacy"]}',
          'volumes:',
          '  db: {name: my-db}',
          '  old: {external: true, name: old-data}',
          '  legacy: {external: {name: legacy-data}}',
        ),
      );
      expect(out.volumes).toEqual({
        [`db-${S}`]: { name: `my-db-${S}` },
        old: { external: true, name: 'old-data' },
        legacy: { external: { name: 'legacy-data' } },
      });
      expect(out.services[`a-${S}`].volumes).toEqual([`db-${S}:/db`, 'old:/old', 'legacy:/legacy']);
    });
  });

  describe('networks', () => {
    it('renames declared networks in list and map form, keeping aliases and settings', () => {
      const out = data(
        lines(
          'services:',
          '  a:',
          '    image: x',
          '    networks: [front, back, default]',
          '  b:',
          '    image: x',
          '    networks:',
          '      back:',
          '        aliases: [database, db]',
          '        ipv4_address: 172.20.0.5',
          '      front:',
          'networks:',
          '  front:',
          '  back: {driver: bridge}',
        ),
      );
      expect(out.services[`a-${S}`].networks).toEqual([`front-${S}`, `back-${S}`, 'default']);
      expect(out.services[`b-${S}`].networks).toEqual({
        [`back-${S}`]: { aliases: ['database', 'db'], ipv4_address: '172.20.0.5' },
        [`front-${S}`]: null,
      });
      expect(out.networks).toEqual({ [`front-${S}`]: null, [`back-${S}`]: { driver: 'bridge' } });
    });

    it('never renames the platform network, external networks or the default key', () => {
      const out = data(
        lines(
          'services:',
          '  a:',
          '    image: x',
          '    networks: [skiff-network, proxy, ext, legacy, default]',
          'networks:',
          '  default: {name: stack-default}',
          '  skiff-network: {external: true}',
          '  proxy: {name: skiff-network}',
          '  ext: {external: true}',
          '  legacy: {external: {name: old-net}}',
        ),
      );
      expect(out.services[`a-${S}`].networks).toEqual(['skiff-network', 'proxy', 'ext', 'legacy', 'default']);
      expect(out.networks).toEqual({
        default: { name: `stack-default-${S}` },
        'skiff-network': { external: true },
        proxy: { name: 'skiff-network' },
        ext: { external: true },
        legacy: { external: { name: 'old-net' } },
      });
    });

    it('takes any YAML spelling of true for external', () => {
      const out = data(lines('services: {}', 'networks:', '  a: {external: yes}', '  b: {external: True}', '  c: {external: false}'));
      expect(Object.keys(out.networks)).toEqual(['a', 'b', `c-${S}`]);
    });
  });

  it('renames secrets and configs at the top level and in services (short and long)', () => {
    const out = data(
      lines(
        'services:',
        '  a:',
        '    image: x',
        '    secrets: [pw, {source: key, target: /run/k, mode: 0400}, outside]',
        '    configs: [conf, {source: conf, target: /etc/c}]',
        'secrets:',
        '  pw: {file: ./pw}',
        '  key: {environment: KEY}',
        '  ext: {external: true}',
        'configs:',
        '  conf: {content: hello}',
      ),
    );
    expect(out.services[`a-${S}`].secrets).toEqual([`pw-${S}`, { source: `key-${S}`, target: '/run/k', mode: 400 }, 'outside']);
    expect(out.services[`a-${S}`].configs).toEqual([`conf-${S}`, { source: `conf-${S}`, target: '/etc/c' }]);
    expect(Object.keys(out.secrets)).toEqual([`pw-${S}`, `key-${S}`, 'ext']);
    expect(Object.keys(out.configs)).toEqual([`conf-${S}`]);
  });

  it('leaves references to names the file does not define as written', () => {
    const text = lines('services:', '  a: {image: x, depends_on: [ghost], links: [ghost], networks: [ghost]}');
    expect(data(text).services[`a-${S}`]).toMatchObject({ depends_on: ['ghost'], links: ['ghost'], networks: ['ghost'] });
  });

  it('keeps the quoting of what it renames and quotes names that would read as numbers', () => {
    const out = randomize(lines('services:', "  'a': {image: x, depends_on: [\"a1\"]}", '  a1: {image: x}'), '5');
    expect(out).toContain(`'a-5': {image: x, depends_on: ["a1-5"]}`);
    const numeric = randomize(lines('services:', '  1e: {image: x}', '  web: {image: x, depends_on: [1e]}'), '5');
    expect(numeric).toContain('"1e-5": {image: x}');
    expect(numeric).toContain('depends_on: ["1e-5"]');
    expect(Object.keys(parse(numeric).services)).toEqual(['1e-5', 'web-5']);
  });

  describe('anchors and merge keys', () => {
    it('gives each service inheriting through << its own renamed copy, leaving the anchor alone', () => {
      const text = lines(
        'x-common: &common',
        '  depends_on: [db]',
        '  networks: [back]',
        'services:',
        '  web:',
        '    <<: *common',
        '    image: x',
        '  worker:',
        '    <<: *common',
        '    image: y',
        '    networks: [front]',
        '  db: {image: z, networks: [back]}',
        'networks: {back: {}, front: {}}',
      );
      const out = data(text);
      expect(out['x-common']).toEqual({ depends_on: ['db'], networks: ['back'] });
      expect(out.services[`web-${S}`]).toEqual({ depends_on: [`db-${S}`], networks: [`back-${S}`], image: 'x' });
      expect(out.services[`worker-${S}`]).toEqual({ depends_on: [`db-${S}`], networks: [`front-${S}`], image: 'y' });
      expect(randomize(randomize(text))).toBe(randomize(text));
    });

    it('copies an aliased value before renaming inside it', () => {
      const text = lines('x-deps: &deps [db]', 'services:', '  web: {image: x, depends_on: *deps}', '  db: {image: y}');
      const out = data(text);
      expect(out['x-deps']).toEqual(['db']);
      expect(out.services[`web-${S}`].depends_on).toEqual([`db-${S}`]);
    });

    it('handles a service that is an alias of another and a service used as a merge source', () => {
      const text = lines(
        'services:',
        '  web: &web',
        '    image: x',
        '    depends_on: [db]',
        '    container_name: web',
        '  web2: *web',
        '  web3:',
        '    <<: *web',
        '    container_name: web3',
        '  db: {image: y}',
      );
      const out = data(text);
      expect(out.services[`web2-${S}`]).toEqual({ image: 'x', depends_on: [`db-${S}`], container_name: `web-${S}` });
      expect(out.services[`web3-${S}`]).toEqual({ container_name: `web3-${S}`, image: 'x', depends_on: [`db-${S}`] });
      expect(randomize(randomize(text))).toBe(randomize(text));
    });
  });

  describe('refusals', () => {
    it.each(['', 'a b', 'x'.repeat(33), 'a/b', 'é'])('refuses the suffix %j', (suffix) => {
      expect(() => randomizeCompose(WORDPRESS, suffix)).toThrow(ComposeError);
      expect(() => randomizeCompose(WORDPRESS, suffix)).toThrow('suffix must be 1 to 32');
    });

    it('refuses a file where two names would become one', () => {
      expect(() => randomize(lines('services:', '  db: {image: x}', `  db-${S}: {image: y}`))).toThrow(
        `randomizing would give two services the name "db-${S}"`,
      );
      expect(() => randomize(lines('services: {}', 'volumes:', '  data:', `  data-${S}: {}`))).toThrow('two volumes');
    });

    it('refuses an alias that contains itself where it has to rename inside it', () => {
      const text = lines('services:', '  web:', '    image: x', '    depends_on: &d [db, *d]', '  db: {image: y}');
      expect(() => randomize(text)).toThrow('an alias contains itself');
    });

    it('refuses text that is not a compose file', () => {
      expect(() => randomizeCompose('- a', S)).toThrow(ComposeError);
    });
  });

  it('randomizedName adds the suffix once', () => {
    expect(randomizedName('web', S)).toBe(`web-${S}`);
    expect(randomizedName(`web-${S}`, S)).toBe(`web-${S}`);
    expect(() => randomizedName('web', '')).toThrow(ComposeError);
  });

  it('accepts a file without services', () => {
    expect(randomize(lines('volumes:', '  data:'))).toBe(lines('volumes:', `  data-${S}:`));
  });
});
