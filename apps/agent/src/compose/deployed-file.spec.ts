import { describe, expect, it } from 'vitest';
import { parseCompose } from '@skiff/domain';
import { deployedFile, type DeployedFileInput } from './deployed-file.js';

/** Every scalar as the text it is (the failsafe schema compose files are read with). */
const parse = (text: string): any => parseCompose(text).document.toJS();

const TEXT = `services:
  web:
    image: nginx
    volumes:
      - ./site:/usr/share/nginx/html
      - data:/data
  tools:
    image: busybox
    profiles: [debug]
  worker:
    image: busybox
    deploy:
      replicas: 0
volumes:
  data:
`;

const input = (overrides: Partial<DeployedFileInput> = {}): DeployedFileInput => ({
  text: TEXT,
  type: 'container-compose',
  appName: 'shop-1a2b3c',
  id: 'cmp_1',
  conversion: { randomize: true, suffix: 'x9', isolated: true, isolatedVolumes: false, routedServices: ['web'] },
  codeDir: '/data/compose/shop-1a2b3c/code',
  filesDir: '/data/compose/shop-1a2b3c/files',
  composePath: 'docker-compose.yml',
  ...overrides,
});

describe('deployedFile', () => {
  it('converts, keeps bind mounts in files/ and labels every service', () => {
    const deployed = deployedFile(input());
    const file = parse(deployed.text);
    expect(Object.keys(file.services)).toEqual(['web-x9', 'tools-x9', 'worker-x9']);
    expect(file.services['web-x9'].volumes).toEqual(['/data/compose/shop-1a2b3c/files/site:/usr/share/nginx/html', 'data-x9:/data']);
    expect(file.services['web-x9'].labels).toEqual({ 'skiff.managed': 'true', 'skiff.kind': 'compose', 'skiff.id': 'cmp_1' });
    expect(file.services['web-x9'].networks).toMatchObject({ 'shop-1a2b3c': '', 'skiff-network': { aliases: ['web-x9.shop-1a2b3c'] } });
    expect(file.version).toBeUndefined();
    expect(deployed.kept).toEqual([{ sourcePath: 'site', keptPath: '/data/compose/shop-1a2b3c/files/site' }]);
    expect(deployed.services).toEqual([
      { name: 'web-x9', profiles: [], replicas: null },
      { name: 'tools-x9', profiles: ['debug'], replicas: null },
      { name: 'worker-x9', profiles: [], replicas: 0 },
    ]);
  });

  it('gives a Swarm stack its service labels and a version', () => {
    const file = parse(deployedFile(input({ type: 'stack', conversion: undefined })).text);
    expect(file.version).toBe('3.9');
    expect(file.services.web.deploy.labels).toEqual({ 'skiff.managed': 'true', 'skiff.kind': 'compose', 'skiff.id': 'cmp_1' });
    expect(file.services.worker.deploy).toEqual({ replicas: '0', labels: file.services.web.deploy.labels });
  });

  it('is the same when the deployed file is deployed again', () => {
    const once = deployedFile(input());
    expect(deployedFile(input({ text: once.text })).text).toBe(once.text);
  });
});
