import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serializeCompose } from './compose-file.js';
import { keepBindMounts } from './bind-mounts.js';

const places = { sourceDir: '/srv/stack/code', composeDir: '/srv/stack/code', keptDir: '/srv/stack/files' };
const keep = (text: string, where = places) => {
  const { file, kept } = keepBindMounts(text, where);
  return { text: serializeCompose(file), volumes: (name: string) => parse(serializeCompose(file)).services[name].volumes, kept };
};

describe('keepBindMounts', () => {
  it('moves relative bind sources (short syntax) under the kept directory, keeping target and mode', () => {
    const out = keep(`services:
  web:
    image: x
    volumes:
      - ./data:/data
      - ./conf/nginx.conf:/etc/nginx/nginx.conf:ro
      - .:/app
      - named:/named
      - /var/log:/host-log
      - ~/cache:/cache
      - \${PWD}/x:/x
      - /anonymous
volumes:
  named:
`);
    expect(out.volumes('web')).toEqual([
      '/srv/stack/files/data:/data',
      '/srv/stack/files/conf/nginx.conf:/etc/nginx/nginx.conf:ro',
      '/srv/stack/files:/app',
      'named:/named',
      '/var/log:/host-log',
      '~/cache:/cache',
      '${PWD}/x:/x',
      '/anonymous',
    ]);
    expect(out.kept).toEqual([
      { sourcePath: 'data', keptPath: '/srv/stack/files/data' },
      { sourcePath: 'conf/nginx.conf', keptPath: '/srv/stack/files/conf/nginx.conf' },
      { sourcePath: '', keptPath: '/srv/stack/files' },
    ]);
  });

  it('moves long-syntax bind sources, not volume ones', () => {
    const out = keep(`services:
  web:
    image: x
    volumes:
      - type: bind
        source: data
        target: /data
        read_only: true
      - type: volume
        source: named
        target: /named
`);
    expect(out.volumes('web')).toEqual([
      { type: 'bind', source: '/srv/stack/files/data', target: '/data', read_only: true },
      { type: 'volume', source: 'named', target: '/named' },
    ]);
  });

  it('resolves against the compose file’s directory; a path out of the source stays what it names', () => {
    const out = keep(
      `services:
  web:
    image: x
    volumes:
      - ./db:/db
      - ../shared:/shared
      - ../../files/legacy:/legacy
      - ../../../../etc:/host-etc
`,
      { ...places, composeDir: '/srv/stack/code/deploy' },
    );
    expect(out.volumes('web')).toEqual([
      '/srv/stack/files/deploy/db:/db',
      '/srv/stack/files/shared:/shared',
      '/srv/stack/files/legacy:/legacy',
      '/etc:/host-etc',
    ]);
    expect(out.kept).toEqual([
      { sourcePath: 'deploy/db', keptPath: '/srv/stack/files/deploy/db' },
      { sourcePath: 'shared', keptPath: '/srv/stack/files/shared' },
      { sourcePath: null, keptPath: '/srv/stack/files/legacy' },
    ]);
  });

  it('copies a volumes list shared through an anchor, and reads services merged in', () => {
    const out = keep(`x-vols: &vols
  - ./data:/data
services:
  web:
    image: x
    volumes: *vols
  api:
    <<: { image: y, volumes: [./api:/api] }
`);
    const parsed = parse(out.text, { merge: true });
    expect(parsed['x-vols']).toEqual(['./data:/data']);
    expect(parsed.services.web.volumes).toEqual(['/srv/stack/files/data:/data']);
    expect(parsed.services.api.volumes).toEqual(['/srv/stack/files/api:/api']);
  });

  it('is idempotent, and a file without relative bind mounts comes back unchanged', () => {
    const text = `services:\n  web:\n    image: x\n    volumes:\n      - ./data:/data\n`;
    const once = keep(text).text;
    expect(keep(once).text).toBe(once);
    const plain = `services:\n  web:\n    image: x # as written\n    volumes: [named:/x]\nvolumes:\n  named:\n`;
    expect(keep(plain).text).toBe(plain);
  });

  it('needs absolute places with the compose file inside the source', () => {
    expect(() => keepBindMounts('services: {}', { ...places, keptDir: 'files' })).toThrow('keptDir must be an absolute path');
    expect(() => keepBindMounts('services: {}', { ...places, composeDir: '/elsewhere' })).toThrow('the compose file must be inside the source');
  });
});
