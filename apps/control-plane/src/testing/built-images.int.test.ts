import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { removeBuiltImages } from './built-images.js';
import { docker } from './stack.js';

const id = `app_builtimg${randomBytes(4).toString('hex')}`;
const repo = `skiff-built-images-${id.toLowerCase()}`;
const labelled = async (what: 'image' | 'container') =>
  (await docker([what === 'image' ? 'images' : 'ps', ...(what === 'container' ? ['-a'] : []), '-q', '--filter', `label=skiff.id=${id}`])).out.split('\n').filter(Boolean);

afterAll(async () => {
  for (const c of await labelled('container')) await docker(['rm', '-f', c]);
  for (const i of await labelled('image')) await docker(['image', 'rm', '-f', i]);
});

describe('removeBuiltImages', () => {
  it("removes an application's images, the one left untagged under a running container too, and the container", async () => {
    const maker = `${repo}-maker`;
    expect((await docker(['create', '--name', maker, 'busybox:latest'])).ok).toBe(true);
    for (const tag of ['dep1', 'dep2']) {
      expect((await docker(['commit', '--change', `LABEL skiff.id=${id}`, '--change', `LABEL skiff.deployment=${tag}`, maker, `${repo}:${tag}`])).ok).toBe(true);
    }
    await docker(['rm', '-f', maker]);
    // A running container of dep1, then dep1's tag removed by force: the image stays, untagged.
    expect((await docker(['run', '-d', '--label', `skiff.id=${id}`, `${repo}:dep1`, 'sleep', '300'])).ok).toBe(true);
    expect((await docker(['image', 'rm', '--force', `${repo}:dep1`])).ok).toBe(true);
    expect(await labelled('image')).toHaveLength(2);

    await removeBuiltImages([id], 1_000);

    expect(await labelled('container')).toEqual([]);
    expect(await labelled('image')).toEqual([]);
  });
});
