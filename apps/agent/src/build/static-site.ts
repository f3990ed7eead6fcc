/**
 * Static sites: the publish directory served by Caddy's file server from an image made
 * `FROM caddy:2` (the image the proxy uses too). The build files are generated, never
 * taken from the user's tree: the context is a directory of the build's work dir holding
 * `Containerfile`, `Caddyfile` and `site/` (a copy of the publish directory without `.git`,
 * links copied as links).
 *
 * The site listens on port 80. With `spa`, a path that names no file answers /index.html
 * (client-side routing).
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export const STATIC_BASE_IMAGE = 'caddy:2';
export const STATIC_PORT = 80;

export function staticContainerfile(): string {
  return [
    `FROM ${STATIC_BASE_IMAGE}`,
    'COPY Caddyfile /etc/caddy/Caddyfile',
    'COPY site/ /srv/',
    `EXPOSE ${STATIC_PORT}`,
    'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]',
    '',
  ].join('\n');
}

export function staticCaddyfile(options: { spa: boolean }): string {
  return [
    '{',
    '\tadmin off',
    '}',
    '',
    `:${STATIC_PORT} {`,
    '\troot * /srv',
    '\tencode gzip',
    ...(options.spa ? ['\ttry_files {path} /index.html'] : []),
    '\tfile_server',
    '}',
    '',
  ].join('\n');
}

/** Writes the build context for the site in `contextDir` (new); answers the Containerfile's path. */
export async function prepareStaticContext(publishDir: string, contextDir: string, options: { spa: boolean }): Promise<string> {
  await mkdir(contextDir, { recursive: true, mode: 0o700 });
  await cp(publishDir, join(contextDir, 'site'), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => basename(src) !== '.git',
  });
  await writeFile(join(contextDir, 'Caddyfile'), staticCaddyfile(options));
  const file = join(contextDir, 'Containerfile');
  await writeFile(file, staticContainerfile());
  return file;
}
