import { describe, expect, it } from 'vitest';
import { DomainError } from '../../errors.js';
import { applicationRegistryAuth, registryHostOf } from './registry-auth.js';

// Sealed values in these tests are the plain text behind a marker, opened by stripping it.
const seal = (plain: string) => `sealed:${plain}`;
const open = (sealed: string) => sealed.replace(/^sealed:/, '');
const app = (fields: { containerImage?: string; registryUrl?: string | null; username?: string | null; password?: string | null }) => ({
  containerImage: 'registry.example.com:5000/acme/shop:1.4',
  registryUrl: null,
  username: null,
  password: null,
  ...fields,
});

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('registryHostOf', () => {
  it('reads a host from a host or a URL, and folds the names of Docker Hub', () => {
    expect(registryHostOf('registry.example.com:5000')).toBe('registry.example.com:5000');
    expect(registryHostOf('https://Registry.Example.com/')).toBe('registry.example.com');
    expect(registryHostOf('http://127.0.0.1:5000/v2/')).toBe('127.0.0.1:5000');
    expect(registryHostOf('https://index.docker.io/v1/')).toBe('docker.io');
    expect(registryHostOf('registry-1.docker.io')).toBe('docker.io');
    expect(registryHostOf('not a host')).toBeNull();
    expect(registryHostOf('ftp://x')).toBeNull();
  });
});

describe('applicationRegistryAuth', () => {
  it('gives no login to an image without credentials', () => {
    expect(applicationRegistryAuth(app({}), open)).toBeUndefined();
    expect(applicationRegistryAuth(app({ containerImage: 'busybox:latest', password: seal('') }), open)).toBeUndefined();
  });

  it("logs in to the image's registry, or to registryUrl's when it is the same one", () => {
    const creds = { username: 'ci', password: seal('s3cret') };
    expect(applicationRegistryAuth(app(creds), open)).toEqual({ serverAddress: 'registry.example.com:5000', username: 'ci', password: 's3cret' });
    expect(applicationRegistryAuth(app({ ...creds, registryUrl: 'https://registry.example.com:5000/' }), open)).toMatchObject({
      serverAddress: 'registry.example.com:5000',
    });
    // Docker Hub: an image without a host, registryUrl empty or naming the Hub.
    for (const registryUrl of [null, '', 'docker.io', 'https://index.docker.io/v1/']) {
      expect(applicationRegistryAuth(app({ ...creds, containerImage: 'acme/shop:1', registryUrl }), open)).toEqual({
        serverAddress: 'https://index.docker.io/v1/',
        username: 'ci',
        password: 's3cret',
      });
    }
  });

  it('refuses a registryUrl that is not the registry of the image, naming registryUrl', () => {
    const creds = { username: 'ci', password: seal('s3cret') };
    const other = refusal(() => applicationRegistryAuth(app({ ...creds, registryUrl: 'ghcr.io' }), open));
    expect(other.code).toBe('BAD_REQUEST');
    expect(other.issues).toEqual([{ path: ['registryUrl'], message: expect.stringContaining('is in registry registry.example.com:5000, not ghcr.io') }]);
    expect(other.message).not.toContain('s3cret');
    const hub = refusal(() => applicationRegistryAuth(app({ ...creds, containerImage: 'acme/shop:1', registryUrl: 'ghcr.io' }), open));
    expect(hub.issues[0]).toMatchObject({ path: ['registryUrl'], message: expect.stringContaining('name the registry in the image (ghcr.io/acme/shop:1)') });
    // Also without credentials: the setting is wrong either way.
    expect(refusal(() => applicationRegistryAuth(app({ registryUrl: 'ghcr.io' }), open)).issues[0].path).toEqual(['registryUrl']);
    expect(refusal(() => applicationRegistryAuth(app({ registryUrl: 'https://' }), open)).issues[0].path).toEqual(['registryUrl']);
  });

  it('refuses half a login, naming the missing field', () => {
    expect(refusal(() => applicationRegistryAuth(app({ username: 'ci' }), open)).issues[0].path).toEqual(['password']);
    expect(refusal(() => applicationRegistryAuth(app({ password: seal('x') }), open)).issues[0].path).toEqual(['username']);
  });
});
