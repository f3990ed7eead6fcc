/**
 * isolateCompose and attachPlatformNetwork. Golden files: libs/domain/src/golden/compose/isolate-*.yml;
 * after an intended change, `UPDATE_GOLDEN=1 npx vitest run libs/domain/src/compose` and review the diff.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PLATFORM_NETWORK } from '../swarm-spec.js';
import { parseCompose, serializeCompose } from './compose-file.js';
import { attachPlatformNetwork, composeUpstream, type IsolateOptions, isolateCompose } from './isolate.js';
import { expectGolden, KITCHEN_SINK, SWARM_STACK, WORDPRESS } from './test-fixtures.js';
import { ComposeError } from './yaml-nodes.js';

const APP = 'shop-a1b2c3';
const isolate = (text: string, options: IsolateOptions = {}) => serializeCompose(isolateCompose(text, APP, options));
const data = (text: string, options: IsolateOptions = {}) => parse(isolate(text, options), { merge: true }) as Record<string, any>;
const attach = (text: string, services: string[]) => serializeCompose(attachPlatformNetwork(text, APP, services));
const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('isolateCompose', () => {
  it('golden: wordpress, isolated', () => expectGolden('isolate-wordpress.yml', isolate(WORDPRESS)));
  it('golden: kitchen sink, isolated with volumes suffixed and web routed', () =>
    expectGolden('isolate-kitchen-sink.yml', isolate(KITCHEN_SINK, { suffixVolumes: true, routedServices: ['web'] })));
  it('golden: swarm stack, isolated with app routed', () =>
    expectGolden('isolate-swarm-stack.yml', isolate(SWARM_STACK, { routedServices: ['app'] })));

  it.each([
    ['wordpress', WORDPRESS, {}],
    ['kitchen sink', KITCHEN_SINK, { suffixVolumes: true, routedServices: ['web', 'cache'] }],
    ['swarm stack', SWARM_STACK, { suffixVolumes: true, routedServices: ['app'] }],
  ] as const)('is idempotent: %s', (_n, text, options) => {
    const once = isolate(text, options);
    expect(isolate(once, options)).toBe(once);
  });

  it('does not change the file it is given', () => {
    const file = parseCompose(KITCHEN_SINK);
    isolateCompose(file, APP, { suffixVolumes: true, routedServices: ['web'] });
    expect(serializeCompose(file)).toBe(KITCHEN_SINK);
  });

  it('declares the stack network external and joins every service to it, keeping default for those that had no networks', () => {
    const out = data(
      lines(
        'services:',
        '  a: {image: x}',
        '  b: {image: x, networks: [back]}',
        '  c:',
        '    image: x',
        '    networks:',
        '      back: {aliases: [cc]}',
        'networks:',
        '  back:',
      ),
    );
    expect(out.networks).toEqual({ back: null, [APP]: { external: true } });
    expect(out.services.a.networks).toEqual(['default', APP]);
    expect(out.services.b.networks).toEqual(['back', APP]);
    expect(out.services.c.networks).toEqual({ back: { aliases: ['cc'] }, [APP]: null });
  });

  it('leaves services with network_mode alone', () => {
    const out = data(lines('services:', '  a: {image: x}', '  b: {image: x, network_mode: "service:a"}', '  c: {image: x, network_mode: host}'));
    expect(out.services.b).toEqual({ image: 'x', network_mode: 'service:a' });
    expect(out.services.c).toEqual({ image: 'x', network_mode: 'host' });
  });

  it('replaces a non-external network under the appName key, and reuses an external one named appName', () => {
    const replaced = data(lines('services:', '  a: {image: x, networks: [shop-a1b2c3]}', 'networks:', `  ${APP}: {driver: bridge}`));
    expect(replaced.networks).toEqual({ [APP]: { external: true } });
    expect(replaced.services.a.networks).toEqual([APP]);
    const reused = data(lines('services:', '  a: {image: x}', 'networks:', `  mine: {external: true, name: ${APP}}`));
    expect(reused.networks).toEqual({ mine: { external: true, name: APP } });
    expect(reused.services.a.networks).toEqual(['default', 'mine']);
  });

  it('suffixes volumes with the appName only when asked, never external ones', () => {
    const text = lines(
      'services:',
      '  a: {image: x, volumes: ["data:/d", "./b:/b", "ext:/e", {type: volume, source: data, target: /l}]}',
      'volumes:',
      '  data:',
      '  ext: {external: true}',
    );
    expect(data(text).volumes).toEqual({ data: null, ext: { external: true } });
    const out = data(text, { suffixVolumes: true });
    expect(out.volumes).toEqual({ [`data-${APP}`]: null, ext: { external: true } });
    expect(out.services.a.volumes).toEqual([`data-${APP}:/d`, './b:/b', 'ext:/e', { type: 'volume', source: `data-${APP}`, target: '/l' }]);
  });

  it('does not rename services, networks or container names', () => {
    const out = data(lines('services:', '  web: {image: x, container_name: web}', 'networks:', '  n:'), { suffixVolumes: true });
    expect(Object.keys(out.services)).toEqual(['web']);
    expect(out.services.web.container_name).toBe('web');
    expect(Object.keys(out.networks)).toEqual(['n', APP]);
  });

  it('keeps merge-key inheritance working: an inherited networks list is copied before it is extended', () => {
    const text = lines('x: &d', '  networks: [back]', 'services:', '  a:', '    <<: *d', '    image: x', 'networks: {back: {}}');
    const out = data(text);
    expect(out.x).toEqual({ networks: ['back'] });
    expect(out.services.a.networks).toEqual(['back', APP]);
  });

  it('copies an aliased networks list before extending it, leaving the anchor alone', () => {
    const text = lines('x-nets: &nets [back]', 'services:', '  a: {image: x, networks: *nets}', '  b: {image: x, networks: *nets}', 'networks: {back: {}}');
    const out = data(text);
    expect(out['x-nets']).toEqual(['back']);
    expect(out.services.a.networks).toEqual(['back', APP]);
    expect(out.services.b.networks).toEqual(['back', APP]);
    expect(isolate(isolate(text))).toBe(isolate(text));
  });

  it('works on a file without services or networks', () => {
    expect(isolate('volumes:\n  data:\n')).toBe(`volumes:\n  data:\nnetworks:\n  ${APP}:\n    external: true\n`);
  });

  it.each(['', '-lead', 'a b', 'default', 'host', 'none', 'bridge', PLATFORM_NETWORK, 'x'.repeat(64)])('refuses the appName %j', (app) => {
    expect(() => isolateCompose(WORDPRESS, app)).toThrow(ComposeError);
  });
});

describe('attachPlatformNetwork', () => {
  it('joins only the listed services, with their alias, declaring the platform network external', () => {
    const out = parse(attach(WORDPRESS, ['wordpress']));
    expect(out.networks).toEqual({ [PLATFORM_NETWORK]: { external: true } });
    expect(out.services.wordpress.networks).toEqual({ default: null, [PLATFORM_NETWORK]: { aliases: [`wordpress.${APP}`] } });
    expect(out.services.db.networks).toBeUndefined();
  });

  it('turns a list into a map to carry the alias, and adds to existing aliases', () => {
    const out = parse(
      attach(
        lines(
          'services:',
          '  a: {image: x, networks: [back]}',
          '  b:',
          '    image: x',
          '    networks:',
          '      skiff-network:',
          '        aliases: [bee]',
          '  c: {image: x, networks: [skiff-network]}',
          'networks:',
          '  back:',
          '  skiff-network: {external: true}',
        ),
        ['a', 'b', 'c'],
      ),
    );
    expect(out.services.a.networks).toEqual({ back: null, [PLATFORM_NETWORK]: { aliases: [`a.${APP}`] } });
    expect(out.services.b.networks).toEqual({ [PLATFORM_NETWORK]: { aliases: ['bee', `b.${APP}`] } });
    expect(out.services.c.networks).toEqual({ [PLATFORM_NETWORK]: { aliases: [`c.${APP}`] } });
  });

  it('makes a non-external platform network declaration external, and uses another key that names it', () => {
    const forced = parse(attach(lines('services:', '  a: {image: x}', 'networks:', '  skiff-network:'), ['a']));
    expect(forced.networks).toEqual({ [PLATFORM_NETWORK]: { external: true } });
    const other = parse(attach(lines('services:', '  a: {image: x}', 'networks:', '  proxy: {external: true, name: skiff-network}'), ['a']));
    expect(other.networks).toEqual({ proxy: { external: true, name: PLATFORM_NETWORK } });
    expect(other.services.a.networks).toEqual({ default: null, proxy: { aliases: [`a.${APP}`] } });
  });

  it('is idempotent and lists a service once however often it is named', () => {
    const once = attach(WORDPRESS, ['wordpress', 'wordpress']);
    expect(attach(once, ['wordpress'])).toBe(once);
  });

  it('changes nothing for an empty list', () => {
    expect(attach(WORDPRESS, [])).toBe(WORDPRESS);
  });

  it('refuses an unknown service and a service with network_mode', () => {
    expect(() => attach(WORDPRESS, ['ghost'])).toThrow('service "ghost" is not defined in the compose file');
    expect(() => attach(lines('services:', '  a: {image: x, network_mode: host}'), ['a'])).toThrow('sets network_mode');
  });

  it('composeUpstream is the alias: service, then appName', () => {
    expect(composeUpstream(APP, 'web')).toBe(`web.${APP}`);
  });
});
