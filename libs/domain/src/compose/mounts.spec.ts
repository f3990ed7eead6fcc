import { describe, expect, it } from 'vitest';
import { convertedCompose } from './convert.js';
import { composeProjectName, composeServiceMounts } from './mounts.js';
import { KITCHEN_SINK, WORDPRESS } from './test-fixtures.js';

describe('composeServiceMounts', () => {
  it('reads short and long volumes, bind mounts and anonymous volumes, with their Docker names', () => {
    expect(composeServiceMounts(KITCHEN_SINK, 'web', 'Shop.App')).toEqual([
      { type: 'volume', source: 'static', volumeName: 'shopapp_static', target: '/srv/static', readOnly: true },
      { type: 'bind', source: './nginx.conf', volumeName: null, target: '/etc/nginx/nginx.conf', readOnly: true },
      { type: 'volume', source: null, volumeName: null, target: '/var/cache/nginx', readOnly: false },
      { type: 'volume', source: 'uploads', volumeName: 'shopapp_uploads', target: '/srv/uploads', readOnly: false },
      { type: 'bind', source: './certs', volumeName: null, target: '/certs', readOnly: false },
    ]);
    expect(composeServiceMounts(KITCHEN_SINK, 'sidecar', 'shop')).toEqual([]);
  });

  it('names external volumes and volumes with their own name as Docker knows them', () => {
    const file = `services:
  db:
    image: postgres
    tmpfs:
      - /run:size=64m
    volumes:
      - data:/var/lib/postgresql/data
      - old:/old:ro,z
      - legacy:/legacy
      - fixed:/fixed
      - type: tmpfs
        target: /scratch
      - type: bind
        source: /srv/backups
        target: /backups
        read_only: true
volumes:
  data:
  old:
    external: true
  legacy:
    external:
      name: legacy-data
  fixed:
    name: shared-fixed
`;
    expect(composeServiceMounts(file, 'db', 'blog')).toEqual([
      { type: 'volume', source: 'data', volumeName: 'blog_data', target: '/var/lib/postgresql/data', readOnly: false },
      { type: 'volume', source: 'old', volumeName: 'old', target: '/old', readOnly: true },
      { type: 'volume', source: 'legacy', volumeName: 'legacy-data', target: '/legacy', readOnly: false },
      { type: 'volume', source: 'fixed', volumeName: 'shared-fixed', target: '/fixed', readOnly: false },
      { type: 'tmpfs', source: null, volumeName: null, target: '/scratch', readOnly: false },
      { type: 'bind', source: '/srv/backups', volumeName: null, target: '/backups', readOnly: true },
      { type: 'tmpfs', source: null, volumeName: null, target: '/run', readOnly: false },
    ]);
  });

  it('follows the deployed names of a randomized file, and answers null for a service it does not define', () => {
    const deployed = convertedCompose(WORDPRESS, { appName: 'blog', randomize: true, suffix: 'x1', isolatedDeployment: false, isolatedDeploymentsVolume: false });
    expect(composeServiceMounts(deployed, 'wordpress-x1', 'blog')).toEqual([
      { type: 'volume', source: 'wordpress-x1', volumeName: 'blog_wordpress-x1', target: '/var/www/html', readOnly: false },
    ]);
    expect(composeServiceMounts(deployed, 'wordpress', 'blog')).toBeNull();
    expect(composeServiceMounts('services:\n  a:\n    image: x\n', 'constructor', 'p')).toBeNull();
  });

  it('normalises the project name as Compose does', () => {
    expect(composeProjectName('My.App_1-x')).toBe('myapp_1-x');
  });
});
