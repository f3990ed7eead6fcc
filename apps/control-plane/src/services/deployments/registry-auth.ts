/**
 * The registry login a DeployApplication command carries for an application whose image is
 * in a private registry. Pure: the caller hands in how to open the sealed password.
 *
 * - No username and no password: no login (public and local images).
 * - Both: a login for the registry of the image reference, or for `registryUrl` when it is
 *   set; `registryUrl` may be written as a host (`registry.example.com:5000`) or a URL
 *   (`https://registry.example.com/`).
 * - When both the image reference and `registryUrl` name a registry, they must be the same
 *   one: the engine sends the login to the image's registry, whatever `registryUrl` says.
 */
import type { Application } from '@skiff/db';
import { parseImageReference } from '@skiff/domain';
import type { RegistryAuth } from '@skiff/proto';
import { Invalid } from '../../errors.js';

/** Docker Hub: the registry of an image reference without a host. */
const DOCKER_HUB = 'docker.io';
/** The names Docker Hub goes by, all meaning DOCKER_HUB. */
const HUB_ALIASES = new Set([DOCKER_HUB, 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);
/** The server address the Docker CLI records for Docker Hub logins. */
const HUB_SERVER_ADDRESS = 'https://index.docker.io/v1/';
const HOST_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:]+\])(?::[0-9]{1,5})?$/;

type RegistryFields = Pick<Application, 'containerImage' | 'registryUrl' | 'username' | 'password'>;

/** A registry host, lower-cased, Docker Hub's aliases folded into `docker.io`. */
const canonicalHost = (host: string) => {
  const lower = host.toLowerCase();
  return HUB_ALIASES.has(lower) ? DOCKER_HUB : lower;
};

/** The registry host `registryUrl` names, or null when it names none. */
export function registryHostOf(registryUrl: string): string | null {
  const withoutScheme = registryUrl.trim().replace(/^https?:\/\//i, '');
  const host = withoutScheme.split('/')[0] ?? '';
  return HOST_RE.test(host.toLowerCase()) ? canonicalHost(host) : null;
}

/** The login for the application's image, or undefined when it has none. Throws `Invalid`. */
export function applicationRegistryAuth(app: RegistryFields, open: (sealed: string) => string): RegistryAuth | undefined {
  const image = app.containerImage ?? '';
  const ref = parseImageReference(image);
  if (!ref) throw Invalid('containerImage', `"${image}" is not a valid image reference`);
  const imageHost = ref.host === null ? DOCKER_HUB : canonicalHost(ref.host);

  let urlHost: string | null = null;
  if (app.registryUrl && app.registryUrl.trim() !== '') {
    urlHost = registryHostOf(app.registryUrl);
    if (urlHost === null) throw Invalid('registryUrl', 'not a registry host (host[:port], optionally as an http(s) URL)');
    if (urlHost !== imageHost) {
      throw Invalid(
        'registryUrl',
        `the image ${image} is in registry ${imageHost}, not ${urlHost}: name the registry in the image (${urlHost}/${ref.path}${ref.tag ? `:${ref.tag}` : ''})`,
      );
    }
  }

  const username = app.username ?? '';
  const password = app.password ? open(app.password) : '';
  if (username === '' && password === '') return undefined;
  if (username === '') throw Invalid('username', 'a registry password is set without a username');
  if (password === '') throw Invalid('password', 'a registry username is set without a password');
  const host = urlHost ?? imageHost;
  return { serverAddress: host === DOCKER_HUB ? HUB_SERVER_ADDRESS : host, username, password };
}
