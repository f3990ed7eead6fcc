import { describe, expect, it } from 'vitest';
import { isImageReference, parseImageReference } from './image-ref.js';

const digest = `sha256:${'a'.repeat(64)}`;

describe('parseImageReference', () => {
  it('splits host, path, tag and digest', () => {
    expect(parseImageReference('redis:8')).toEqual({ host: null, path: 'redis', tag: '8', digest: null });
    expect(parseImageReference('registry.example.com:5000/cache/redis:8.2-alpine')).toEqual({
      host: 'registry.example.com:5000',
      path: 'cache/redis',
      tag: '8.2-alpine',
      digest: null,
    });
    expect(parseImageReference(`localhost/redis@${digest}`)).toEqual({ host: 'localhost', path: 'redis', tag: null, digest });
    expect(parseImageReference(`bitnami/redis:7@${digest}`)).toEqual({ host: null, path: 'bitnami/redis', tag: '7', digest });
    expect(parseImageReference('[::1]:5000/redis')).toMatchObject({ host: '[::1]:5000', path: 'redis' });
  });

  it('takes the separators Docker allows inside path components', () => {
    for (const ok of ['my_org/re__dis', 'a.b/c-d', 'a---b', 'ghcr.io/acme/tools/redis-stack:latest']) {
      expect(isImageReference(ok), ok).toBe(true);
    }
  });

  it('refuses what is not a reference, including anything a shell would interpret', () => {
    for (const bad of [
      '',
      'Redis',
      'redis:',
      'redis:-bad',
      'redis; rm -rf /',
      'redis $(id)',
      'redis:8 --privileged',
      '-redis',
      'redis_',
      'redis//x',
      '/redis',
      'redis@sha256:abc',
      'redis:' + 'x'.repeat(129),
      'a'.repeat(256),
      'bad host!/redis',
    ]) {
      expect(isImageReference(bad), bad).toBe(false);
    }
  });
});
