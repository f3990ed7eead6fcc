import { describe, expect, it } from 'vitest';
import { tagOfPath } from './registry-gc.js';

const REPOS = '/var/lib/registry/docker/registry/v2/repositories';

describe('tagOfPath', () => {
  it('reads the repository and tag of a tag folder', () => {
    expect(tagOfPath(`${REPOS}/shop/_manifests/tags/v1/current`)).toEqual({ repo: 'shop', tag: 'v1' });
    expect(tagOfPath(`${REPOS}/team/shop/_manifests/tags/2026.11_a-b/current`)).toEqual({ repo: 'team/shop', tag: '2026.11_a-b' });
    // A repository may itself hold the words: the last occurrence delimits the tag.
    expect(tagOfPath(`${REPOS}/a/_manifests/tags/b/_manifests/tags/c/current`)).toEqual({ repo: 'a/_manifests/tags/b', tag: 'c' });
  });

  it('refuses anything else', () => {
    for (const path of [
      '',
      `${REPOS}/shop/_manifests/tags/v1`,
      `${REPOS}/shop/_manifests/tags//current`,
      `${REPOS}/_manifests/tags/v1/current`,
      `${REPOS}/shop/_manifests/revisions/sha256/current`,
      `/elsewhere/shop/_manifests/tags/v1/current`,
      `${REPOS}shop/_manifests/tags/v1/current`,
    ]) {
      expect(tagOfPath(path), path).toBeNull();
    }
  });
});
