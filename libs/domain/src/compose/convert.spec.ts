/**
 * convertedCompose: the file as deployed. Golden files: libs/domain/src/golden/compose/converted-*.yml;
 * after an intended change, `UPDATE_GOLDEN=1 npx vitest run libs/domain/src/compose` and review the diff.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCompose, serializeCompose } from './compose-file.js';
import { type ComposeDeploySettings, convertedCompose } from './convert.js';
import { attachPlatformNetwork, isolateCompose } from './isolate.js';
import { randomizeCompose } from './randomize.js';
import { expectGolden, KITCHEN_SINK, SWARM_STACK, WORDPRESS } from './test-fixtures.js';
import { ComposeError } from './yaml-nodes.js';

function settings(overrides: Partial<ComposeDeploySettings> = {}): ComposeDeploySettings {
  return {
    appName: 'blog-9f8e7d',
    randomize: false,
    suffix: null,
    isolatedDeployment: false,
    isolatedDeploymentsVolume: false,
    routedServices: [],
    ...overrides,
  };
}

const everything = settings({
  randomize: true,
  suffix: 'q7w8',
  isolatedDeployment: true,
  isolatedDeploymentsVolume: true,
  routedServices: ['wordpress'],
});

describe('convertedCompose', () => {
  it('golden: wordpress with every option', () => expectGolden('converted-wordpress-all.yml', convertedCompose(WORDPRESS, everything)));
  it('golden: kitchen sink randomized and routed, not isolated', () =>
    expectGolden(
      'converted-kitchen-sink-randomized.yml',
      convertedCompose(KITCHEN_SINK, settings({ randomize: true, suffix: 'q7w8', routedServices: ['web', 'api'] })),
    ));
  it('golden: swarm stack isolated and routed', () =>
    expectGolden('converted-swarm-isolated.yml', convertedCompose(SWARM_STACK, settings({ isolatedDeployment: true, routedServices: ['app'] }))));

  it('gives back the stored file unchanged when no option is on', () => {
    expect(convertedCompose(KITCHEN_SINK, settings())).toBe(KITCHEN_SINK);
    expect(convertedCompose(WORDPRESS, settings({ suffix: 'abc', isolatedDeploymentsVolume: true }))).toBe(WORDPRESS);
  });

  it('is the composition randomize → isolate → platform network, in that order', () => {
    let file = randomizeCompose(WORDPRESS, 'q7w8', { otherSuffixes: ['blog-9f8e7d'] });
    file = isolateCompose(file, 'blog-9f8e7d', { suffixVolumes: true, otherSuffixes: ['q7w8'] });
    file = attachPlatformNetwork(file, 'blog-9f8e7d', ['wordpress-q7w8']);
    expect(convertedCompose(WORDPRESS, everything)).toBe(serializeCompose(file));
  });

  it.each([
    ['wordpress, every option', WORDPRESS, everything],
    ['kitchen sink, every option', KITCHEN_SINK, { ...everything, routedServices: ['web', 'cache'] }],
    ['swarm stack, isolated', SWARM_STACK, settings({ isolatedDeployment: true, isolatedDeploymentsVolume: true, routedServices: ['app'] })],
  ])('converting the converted file changes nothing (a redeploy never renames again): %s', (_n, text, s) => {
    const once = convertedCompose(text, s);
    expect(convertedCompose(once, s)).toBe(once);
  });

  it('suffixes volumes with the randomize suffix, then the appName, once each', () => {
    const out = parse(convertedCompose(WORDPRESS, everything));
    expect(Object.keys(out.volumes)).toEqual(['wordpress-q7w8-blog-9f8e7d', 'db-q7w8-blog-9f8e7d']);
    expect(out.services['db-q7w8'].volumes).toEqual(['db-q7w8-blog-9f8e7d:/var/lib/mysql']);
  });

  it('understands routed services named before or after randomizing', () => {
    const before = convertedCompose(WORDPRESS, { ...everything, routedServices: ['wordpress'] });
    const after = convertedCompose(WORDPRESS, { ...everything, routedServices: ['wordpress-q7w8'] });
    expect(after).toBe(before);
    expect(parse(before).services['wordpress-q7w8'].networks['skiff-network']).toEqual({ aliases: ['wordpress-q7w8.blog-9f8e7d'] });
  });

  it('routes through the platform network when the stack is not isolated', () => {
    const out = parse(convertedCompose(WORDPRESS, settings({ routedServices: ['wordpress'] })));
    expect(out.networks).toEqual({ 'skiff-network': { external: true } });
    expect(out.services.wordpress.networks).toEqual({ default: null, 'skiff-network': { aliases: ['wordpress.blog-9f8e7d'] } });
    expect(out.services.db.networks).toBeUndefined();
  });

  it('refuses randomize without a suffix, and a domain naming a service the file lacks', () => {
    expect(() => convertedCompose(WORDPRESS, settings({ randomize: true, suffix: '' }))).toThrow('randomize is on but the stack has no suffix');
    expect(() => convertedCompose(WORDPRESS, settings({ routedServices: ['ghost'] }))).toThrow(
      'a domain routes to service "ghost", which the compose file does not define',
    );
    expect(() => convertedCompose('services: [a]', settings())).toThrow(ComposeError);
  });

  it('does not change a parsed file it is given', () => {
    const file = parseCompose(KITCHEN_SINK);
    convertedCompose(file, { ...everything, routedServices: ['web'] });
    expect(serializeCompose(file)).toBe(KITCHEN_SINK);
  });
});
