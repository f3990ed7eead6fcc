// The server registry's configuration and service specs (server-registry.ts), exactly: the
// registry on this node with its volume, the same storage read-only on the overlay network,
// the mirror on every node pulling through it; the published ones behind the htpasswd login,
// in host mode.
// Running them on two engines: apps/control-plane/src/cluster-server-registry.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { mirrorServiceSpec, readerServiceSpec, registryConfigText, registryServiceSpec } from './server-registry.js';

const settings = { image: 'registry:2', port: 5030 };
const config = { id: 'cfg1', name: 'skiff-registry-config-abc' };
const htpasswd = { id: 'pw1', name: 'skiff-registry-htpasswd-def' };
const labels = { 'skiff.managed': 'true', 'skiff.role': 'server-registry' };

describe('server registry', () => {
  it('configures the registry with the login, a read-only reader without, and the mirror pulling through the reader', () => {
    const base = {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: '/var/lib/registry' }, delete: { enabled: false } },
      http: { addr: ':5000', secret: 'h' },
    };
    const auth = { htpasswd: { realm: 'skiff', path: '/run/secrets/htpasswd' } };
    expect(JSON.parse(registryConfigText({ httpSecret: 'h' }, 'registry'))).toEqual({ ...base, storage: { ...base.storage, delete: { enabled: true } }, auth });
    expect(JSON.parse(registryConfigText({ httpSecret: 'h' }, 'reader'))).toEqual({
      ...base,
      storage: { ...base.storage, maintenance: { readonly: { enabled: true }, uploadpurging: { enabled: false } } },
    });
    expect(JSON.parse(registryConfigText({ httpSecret: 'h' }, 'mirror'))).toEqual({ ...base, auth, proxy: { remoteurl: 'http://skiff-registry-reader:5000' } });
  });

  it('runs the registry on this node and a mirror on every node, each in host mode', () => {
    const secrets = [
      { SecretID: 'cfg1', SecretName: 'skiff-registry-config-abc', File: { Name: 'config.yml', UID: '0', GID: '0', Mode: 0o400 } },
      { SecretID: 'pw1', SecretName: 'skiff-registry-htpasswd-def', File: { Name: 'htpasswd', UID: '0', GID: '0', Mode: 0o400 } },
    ];
    const task = (volume: string, overlay: boolean, files = secrets, readOnly = false) => ({
      ContainerSpec: {
        Image: 'registry:2',
        Labels: labels,
        Command: ['registry', 'serve', '/run/secrets/config.yml'],
        Mounts: [{ Type: 'volume', Source: volume, Target: '/var/lib/registry', VolumeOptions: { Labels: labels }, ...(readOnly ? { ReadOnly: true } : {}) }],
        Secrets: files,
      },
      RestartPolicy: { Condition: 'any', Delay: 2_000_000_000 },
      ...(overlay ? { Networks: [{ Target: 'skiff-registry' }] } : {}),
    });
    const endpoint = (port: number) => ({ Mode: 'dnsrr', Ports: [{ Protocol: 'tcp', TargetPort: 5000, PublishedPort: port, PublishMode: 'host' }] });
    const here = { Constraints: [`node.id==${'n'.repeat(25)}`] };
    expect(registryServiceSpec(settings, 'n'.repeat(25), config, htpasswd)).toEqual({
      Name: 'skiff-registry',
      Labels: labels,
      TaskTemplate: { ...task('skiff-registry-data', false), Placement: here },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: endpoint(5030),
    });
    expect(readerServiceSpec(settings, 'n'.repeat(25), config)).toEqual({
      Name: 'skiff-registry-reader',
      Labels: labels,
      TaskTemplate: { ...task('skiff-registry-data', true, [secrets[0]!], true), Placement: here },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' },
    });
    expect(mirrorServiceSpec(settings, config, htpasswd)).toEqual({
      Name: 'skiff-registry-mirror',
      Labels: labels,
      TaskTemplate: task('skiff-registry-mirror', true),
      Mode: { Global: {} },
      EndpointSpec: endpoint(5031),
    });
  });
});
