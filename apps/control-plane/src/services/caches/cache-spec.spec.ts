import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CacheInstance } from '@skiff/db';
import { swarmServiceSpec } from '@skiff/domain';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REDIS_OPTIONS, REDIS_START_SCRIPT, cacheProcess, cacheWorkloadSpec } from './cache-spec.js';

const row = (overrides: Partial<CacheInstance> = {}): CacheInstance =>
  ({
    id: 'rds_0123456789abcdef',
    environmentId: 'env_1',
    serverId: null,
    name: 'Sessions',
    appName: 'sessions-a1b2c3',
    description: null,
    applicationStatus: 'idle',
    containerImage: 'redis:8',
    databasePassword: 'sealed',
    env: 'sealed',
    command: null,
    args: null,
    externalPort: null,
    networkIds: null,
    detachPlatformNetwork: false,
    replicas: 1,
    memoryReservation: null,
    memoryLimit: null,
    cpuReservation: null,
    cpuLimit: null,
    healthCheckCluster: null,
    restartPolicyCluster: null,
    placementCluster: null,
    updateConfigCluster: null,
    rollbackConfigCluster: null,
    modeCluster: null,
    labelsCluster: null,
    networkCluster: null,
    stopGracePeriodCluster: null,
    endpointSpecCluster: null,
    ulimitsCluster: null,
    createdAt: new Date(0),
    ...overrides,
  }) as CacheInstance;

const specOf = (r: CacheInstance) => swarmServiceSpec({ ...cacheWorkloadSpec(r, 3), env: ['REDIS_PASSWORD=pw'] });

describe('cacheWorkloadSpec', () => {
  it('runs the image with the password script, the data volume at /data and no published port by default', () => {
    const spec = specOf(row());
    expect(spec.Name).toBe('sessions-a1b2c3');
    expect(spec.Labels).toEqual({ 'skiff.managed': 'true', 'skiff.kind': 'cache', 'skiff.id': 'rds_0123456789abcdef' });
    const container = spec.TaskTemplate.ContainerSpec;
    expect(container.Image).toBe('redis:8');
    expect(container.Command).toBeUndefined();
    expect(container.Args).toEqual(['/bin/sh', '-c', REDIS_START_SCRIPT, 'sh', '--dir', '/data', '--appendonly', 'yes']);
    expect(container.Mounts).toEqual([
      {
        Type: 'volume',
        Source: 'skiff-cache-rds_0123456789abcdef-data',
        Target: '/data',
        VolumeOptions: { Labels: { 'skiff.managed': 'true', 'skiff.kind': 'cache', 'skiff.id': 'rds_0123456789abcdef' } },
      },
    ]);
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
    expect(spec.TaskTemplate.ForceUpdate).toBe(3);
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: 'skiff-network' }]);
    // A volume: the old task stops before the new one starts.
    expect(spec.UpdateConfig?.Order).toBe('stop-first');
  });

  it('never puts the password in the spec: it travels in the env of the command', () => {
    const input = cacheWorkloadSpec(row({ databasePassword: 'sealed-secret' }), 1);
    expect(input.env).toEqual([]);
    expect(JSON.stringify(input)).not.toContain('sealed-secret');
  });

  it('publishes externalPort on the host and joins networkIds, or leaves the platform network', () => {
    const spec = specOf(row({ externalPort: 16379, networkIds: ['legacy'], detachPlatformNetwork: true }));
    expect(spec.EndpointSpec.Ports).toEqual([{ Protocol: 'tcp', TargetPort: 6379, PublishedPort: 16379, PublishMode: 'host' }]);
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: 'legacy' }]);
  });

  it('passes resources, replicas, another image and the *Cluster values', () => {
    const spec = specOf(
      row({
        containerImage: 'registry.example.com/redis:8.2',
        replicas: 2,
        memoryLimit: '268435456',
        cpuLimit: '500000000',
        restartPolicyCluster: { Condition: 'on-failure', MaxAttempts: 3 },
        labelsCluster: { team: 'a' },
        ulimitsCluster: [{ Name: 'nofile', Soft: 65536, Hard: 65536 }],
      }),
    );
    expect(spec.TaskTemplate.ContainerSpec.Image).toBe('registry.example.com/redis:8.2');
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 2 } });
    expect(spec.TaskTemplate.Resources).toEqual({ Limits: { MemoryBytes: 268435456, NanoCPUs: 500000000 } });
    expect(spec.TaskTemplate.RestartPolicy).toMatchObject({ Condition: 'on-failure', MaxAttempts: 3 });
    expect(spec.Labels.team).toBe('a');
    expect(spec.TaskTemplate.ContainerSpec.Ulimits).toEqual([{ Name: 'nofile', Soft: 65536, Hard: 65536 }]);
  });
});

describe('cacheProcess', () => {
  it('takes args as the options of redis-server, the password still set', () => {
    expect(cacheProcess({ command: null, args: ['--maxmemory', '100mb'] })).toEqual({
      command: null,
      args: ['/bin/sh', '-c', REDIS_START_SCRIPT, 'sh', '--maxmemory', '100mb'],
    });
    expect(cacheProcess({ command: '  ', args: null }).args?.slice(4)).toEqual(DEFAULT_REDIS_OPTIONS);
  });

  it('lets command replace the entrypoint, with args as they are', () => {
    expect(cacheProcess({ command: 'valkey-server', args: ['--port', '6379'] })).toEqual({ command: 'valkey-server', args: ['--port', '6379'] });
  });
});

describe('REDIS_START_SCRIPT', () => {
  /** What the script runs, with `redis-server` and `docker-entrypoint.sh` replaced by printers of their argv. */
  const run = (password: string, options: string[], withEntrypoint: boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-redis-script-'));
    const printer = '#!/bin/sh\nprintf "[%s]" "${0##*/}" "$@"\n';
    try {
      for (const name of withEntrypoint ? ['redis-server', 'docker-entrypoint.sh'] : ['redis-server']) {
        writeFileSync(join(dir, name), printer, { mode: 0o755 });
      }
      return execFileSync('/bin/sh', ['-c', REDIS_START_SCRIPT, 'sh', ...options], {
        env: { PATH: `${dir}:/usr/bin:/bin`, REDIS_PASSWORD: password },
      }).toString();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('runs redis-server with the options, then the password as one argument, never evaluated', () => {
    const password = `a b"$(touch /nonexistent/x)'\`id\`;*`;
    expect(run(password, ['--dir', '/data', '--save', ''], false)).toBe(
      `[redis-server][--dir][/data][--save][][--requirepass][${password}]`,
    );
  });

  it("goes through the official image's entrypoint when there is one", () => {
    expect(run('pw', ['--appendonly', 'yes'], true)).toBe('[docker-entrypoint.sh][redis-server][--appendonly][yes][--requirepass][pw]');
  });
});
