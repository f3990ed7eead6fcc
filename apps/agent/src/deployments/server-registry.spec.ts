// The server registry's configuration and service specs (server-registry.ts), exactly: the
// registry on this node with its volume, the mirror on every node pulling through it, both
// behind the htpasswd login and published in host mode on loopback-reachable ports.
// Running them on two engines: apps/control-plane/src/cluster-server-registry.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { mirrorServiceSpec, registryConfigText, registryServiceSpec } from './server-registry.js';

const settings = { image: 'registry:2', port: 5030 };
const config = { id: 'cfg1', name: 'skiff-registry-config-abc' };
const htpasswd = { id: 'pw1', name: 'skiff-registry-htpasswd-def' };
const labels = { 'skiff.managed': 'true', 'skiff.role': 'server-registry' };

describe('server registry', () => {
  it('configures the registry with the login, and the mirror to pull through it with the same login', () => {
    const base = {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: '/var/lib/registry' }, delete: { enabled: true } },
      http: { addr: ':5000', secret: 'h' },
      auth: { htpasswd: { realm: 'skiff', path: '/run/secrets/htpasswd' } },
    };
    expect(JSON.parse(registryConfigText({ httpSecret: 'h' }, null))).toEqual(base);
    expect(JSON.parse(registryConfigText({ httpSecret: 'h' }, { username: 'skiff', password: 'p' }))).toEqual({
      ...base,
      proxy: { remoteurl: 'http://skiff-registry:5000', username: 'skiff', password: 'p' },
    });
  });

  it('runs the registry on this node and a mirror on every node, each in host mode', () => {
    const secrets = [
      { SecretID: 'cfg1', SecretName: 'skiff-registry-config-abc', File: { Name: 'config.yml', UID: '0', GID: '0', Mode: 0o400 } },
      { SecretID: 'pw1', SecretName: 'skiff-registry-htpasswd-def', File: { Name: 'htpasswd', UID: '0', GID: '0', Mode: 0o400 } },
    ];
    const task = (volume: string) => ({
      ContainerSpec: {
        Image: 'registry:2',
        Labels: labels,
        Command: ['registry', 'serve', '/run/secrets/config.yml'],
        Mounts: [{ Type: 'volume', Source: volume, Target: '/var/lib/registry', VolumeOptions: { Labels: labels } }],
        Secrets: secrets,
      },
      RestartPolicy: { Condition: 'any', Delay: 2_000_000_000 },
      Networks: [{ Target: 'skiff-registry' }],
    });
    const endpoint = (port: number) => ({ Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: 5000, PublishedPort: port, PublishMode: 'host' }] });
    expect(registryServiceSpec(settings, 'n'.repeat(25), config, htpasswd)).toEqual({
      Name: 'skiff-registry',
      Labels: labels,
      TaskTemplate: { ...task('skiff-registry-data'), Placement: { Constraints: [`node.id==${'n'.repeat(25)}`] } },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: endpoint(5030),
    });
    expect(mirrorServiceSpec(settings, config, htpasswd)).toEqual({
      Name: 'skiff-registry-mirror',
      Labels: labels,
      TaskTemplate: task('skiff-registry-mirror'),
      Mode: { Global: {} },
      EndpointSpec: endpoint(5031),
    });
  });
});
