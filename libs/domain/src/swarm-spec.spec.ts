/**
 * Golden tests of the Swarm service spec builder.
 *
 * The full outputs for three workloads are compared with JSON files under
 * libs/domain/src/golden/swarm-spec/. After an intended change, regenerate them with
 *
 *   UPDATE_GOLDEN=1 npx vitest run libs/domain/src/swarm-spec.spec.ts
 *
 * and review the diff of the golden files before committing. Without UPDATE_GOLDEN a
 * missing or different golden file fails the test.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PLATFORM_NETWORK, SwarmSpecError, swarmServiceSpec, type WorkloadSpecInput } from './swarm-spec.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'golden', 'swarm-spec');
const SECOND = 1_000_000_000;

function expectGolden(name: string, actual: unknown): void {
  const file = join(GOLDEN_DIR, `${name}.json`);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(file, text);
  }
  if (!existsSync(file)) {
    throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1 to create it`);
  }
  // Strict: the spec must have no undefined fields and no field the golden lacks.
  expect(actual).toStrictEqual(JSON.parse(readFileSync(file, 'utf8')));
}

function application(overrides: Partial<WorkloadSpecInput> = {}): WorkloadSpecInput {
  return {
    appName: 'shop-web-a1b2c3',
    kind: 'application',
    id: 'app_1',
    image: 'registry.local:5000/shop/web:3',
    env: ['NODE_ENV=production'],
    command: null,
    args: null,
    replicas: 1,
    memoryLimit: null,
    memoryReservation: null,
    cpuLimit: null,
    cpuReservation: null,
    platformNetwork: PLATFORM_NETWORK,
    ...overrides,
  };
}

const everyCluster: Partial<WorkloadSpecInput> = {
  command: `node --enable-source-maps "dist/main server.js"`,
  args: ['--port', '3000'],
  replicas: 2,
  memoryLimit: '536870912',
  memoryReservation: '268435456',
  cpuLimit: '1500000000',
  cpuReservation: '250000000',
  env: ['NODE_ENV=production', 'DATABASE_URL=postgres://db:5432/shop', 'EMPTY='],
  forceUpdate: 3,
  healthCheckCluster: {
    Test: ['CMD', 'wget', '-q', '-O-', 'http://127.0.0.1:3000/health'],
    Interval: 10 * SECOND,
    Timeout: 3 * SECOND,
    StartPeriod: 20 * SECOND,
    Retries: 3,
  },
  restartPolicyCluster: { Condition: 'on-failure', MaxAttempts: 5, Window: 60 * SECOND },
  placementCluster: {
    Constraints: ['node.role==worker'],
    Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }],
    MaxReplicas: 1,
    Platforms: [{ Architecture: 'amd64', OS: 'linux' }],
  },
  updateConfigCluster: { Parallelism: 2, Delay: 2 * SECOND, MaxFailureRatio: 0.5 },
  rollbackConfigCluster: { Parallelism: 0, FailureAction: 'continue' },
  modeCluster: { Replicated: { Replicas: 4 } },
  labelsCluster: { team: 'shop', 'traefik.enable': 'false', 'skiff.kind': 'compose', 'skiff.id': 'other' },
  networkCluster: [
    { Target: 'shared-db', Aliases: ['web'] },
    { Target: PLATFORM_NETWORK, Aliases: ['shop'] },
  ],
  stopGracePeriodCluster: 30 * SECOND,
  endpointSpecCluster: {
    Mode: 'vip',
    Ports: [
      { TargetPort: 3000, PublishedPort: 8080, PublishMode: 'ingress' },
      { TargetPort: 9090, Protocol: 'udp', Name: 'metrics' },
    ],
  },
  ulimitsCluster: [{ Name: 'nofile', Soft: 65536, Hard: 65536 }],
};

function cache(overrides: Partial<WorkloadSpecInput> = {}): WorkloadSpecInput {
  return application({
    appName: 'sessions-d4e5f6',
    kind: 'cache',
    id: 'cch_1',
    image: 'redis:8',
    env: ['REDIS_PASSWORD=s3cret'],
    command: 'redis-server',
    args: ['--appendonly', 'yes'],
    memoryLimit: '268435456',
    networks: ['legacy-net'],
    ports: [{ TargetPort: 6379, PublishedPort: 16379 }],
    volumes: [{ source: 'sessions-d4e5f6-data', target: '/data' }],
    ...overrides,
  });
}

describe('swarmServiceSpec golden files', () => {
  it('a minimal application', () => {
    expectGolden('application-minimal', swarmServiceSpec(application()));
  });
  it('an application with every *Cluster field', () => {
    expectGolden('application-every-cluster', swarmServiceSpec(application(everyCluster)));
  });
  it('a cache instance', () => {
    expectGolden('cache', swarmServiceSpec(cache()));
  });
});

describe('labels', () => {
  it('always carries skiff.managed, skiff.kind and skiff.id on the service and its containers', () => {
    const spec = swarmServiceSpec(cache());
    const expected = { 'skiff.managed': 'true', 'skiff.kind': 'cache', 'skiff.id': 'cch_1' };
    expect(spec.Labels).toEqual(expected);
    expect(spec.TaskTemplate.ContainerSpec.Labels).toEqual(expected);
  });

  it('merges user labels but never lets them override or add skiff.* labels, in any case', () => {
    const spec = swarmServiceSpec(
      application({
        labelsCluster: {
          'skiff.managed': 'false',
          'skiff.kind': 'proxy',
          'skiff.id': 'someone-else',
          'Skiff.Id': 'x',
          'skiff.extra': 'y',
          owner: 'me',
        },
      }),
    );
    expect(spec.Labels).toEqual({ owner: 'me', 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': 'app_1' });
  });

  it('keeps user labels off the containers', () => {
    expect(swarmServiceSpec(application({ labelsCluster: { a: 'b' } })).TaskTemplate.ContainerSpec.Labels).not.toHaveProperty('a');
  });
});

describe('defaults', () => {
  const spec = swarmServiceSpec(application());

  it('names the service by appName, runs Init and the resolved env', () => {
    expect(spec.Name).toBe('shop-web-a1b2c3');
    expect(spec.TaskTemplate.ContainerSpec).toMatchObject({ Init: true, Env: ['NODE_ENV=production'] });
  });

  it('attaches the platform network with endpoint mode dnsrr', () => {
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: 'skiff-network' }]);
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  });

  it('rolls out start-first with rollback on failure', () => {
    expect(spec.UpdateConfig).toEqual({ Parallelism: 1, Order: 'start-first', FailureAction: 'rollback', Monitor: SECOND / 2 });
    expect(spec.RollbackConfig).toEqual({ Parallelism: 1, Order: 'start-first', FailureAction: 'pause', Monitor: 5 * SECOND });
  });

  it('restarts on any exit after 5 s and runs `replicas` copies', () => {
    expect(spec.TaskTemplate.RestartPolicy).toEqual({ Condition: 'any', Delay: 5 * SECOND });
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
  });

  it('sets nothing it was not asked for', () => {
    expect(Object.keys(spec.TaskTemplate).sort()).toEqual(['ContainerSpec', 'Networks', 'RestartPolicy']);
    expect(Object.keys(spec.TaskTemplate.ContainerSpec).sort()).toEqual(['Env', 'Image', 'Init', 'Labels']);
  });

  it('takes 0 replicas (a stopped service)', () => {
    expect(swarmServiceSpec(application({ replicas: 0 })).Mode).toEqual({ Replicated: { Replicas: 0 } });
  });
});

describe('overrides', () => {
  it('merges updateConfigCluster and rollbackConfigCluster field by field', () => {
    const spec = swarmServiceSpec(
      application({
        updateConfigCluster: { Parallelism: 3, Order: 'stop-first' },
        rollbackConfigCluster: { Parallelism: 2, Monitor: SECOND },
      }),
    );
    expect(spec.UpdateConfig).toEqual({ Parallelism: 3, Order: 'stop-first', FailureAction: 'rollback', Monitor: SECOND / 2 });
    expect(spec.RollbackConfig).toEqual({ Parallelism: 2, Order: 'start-first', FailureAction: 'pause', Monitor: SECOND });
  });

  it('merges restartPolicyCluster field by field', () => {
    const spec = swarmServiceSpec(application({ restartPolicyCluster: { MaxAttempts: 3 } }));
    expect(spec.TaskTemplate.RestartPolicy).toEqual({ Condition: 'any', Delay: 5 * SECOND, MaxAttempts: 3 });
  });

  it('lets modeCluster override replicas, and fills Replicas in when it has none', () => {
    expect(swarmServiceSpec(application({ replicas: 2, modeCluster: { Replicated: { Replicas: 5 } } })).Mode).toEqual({
      Replicated: { Replicas: 5 },
    });
    expect(swarmServiceSpec(application({ replicas: 2, modeCluster: { Replicated: {} } })).Mode).toEqual({
      Replicated: { Replicas: 2 },
    });
    expect(swarmServiceSpec(application({ replicas: 2, modeCluster: { Global: {} } })).Mode).toEqual({ Global: {} });
  });

  it('gives job modes no update or rollback config (the engine refuses them)', () => {
    const spec = swarmServiceSpec(
      application({ modeCluster: { ReplicatedJob: { TotalCompletions: 1 } }, updateConfigCluster: { Parallelism: 1 } }),
    );
    expect(spec.Mode).toEqual({ ReplicatedJob: { TotalCompletions: 1 } });
    expect(spec).not.toHaveProperty('UpdateConfig');
    expect(spec).not.toHaveProperty('RollbackConfig');
    expect(swarmServiceSpec(application({ modeCluster: { GlobalJob: {} } }))).not.toHaveProperty('UpdateConfig');
  });

  it('lets endpointSpecCluster change the mode, and publishes ports in host mode over tcp by default', () => {
    const spec = swarmServiceSpec(
      application({ endpointSpecCluster: { Ports: [{ TargetPort: 80, PublishedPort: 8080 }] } }),
    );
    expect(spec.EndpointSpec).toEqual({
      Mode: 'dnsrr',
      Ports: [{ Protocol: 'tcp', TargetPort: 80, PublishedPort: 8080, PublishMode: 'host' }],
    });
    expect(swarmServiceSpec(application({ endpointSpecCluster: { Mode: 'vip' } })).EndpointSpec).toEqual({ Mode: 'vip' });
  });

  it('rolls out stop-first when a fixed host port or a volume forbids two copies, unless told otherwise', () => {
    const hostPort = application({ endpointSpecCluster: { Ports: [{ TargetPort: 80, PublishedPort: 8080 }] } });
    expect(swarmServiceSpec(hostPort).UpdateConfig?.Order).toBe('stop-first');
    expect(swarmServiceSpec(hostPort).RollbackConfig?.Order).toBe('stop-first');
    const randomPort = application({ endpointSpecCluster: { Ports: [{ TargetPort: 80 }] } });
    expect(swarmServiceSpec(randomPort).UpdateConfig?.Order).toBe('start-first');
    const ingress = application({
      endpointSpecCluster: { Mode: 'vip', Ports: [{ TargetPort: 80, PublishedPort: 8080, PublishMode: 'ingress' }] },
    });
    expect(swarmServiceSpec(ingress).UpdateConfig?.Order).toBe('start-first');
    const volume = application({ volumes: [{ source: 'data', target: '/data' }] });
    expect(swarmServiceSpec(volume).UpdateConfig?.Order).toBe('stop-first');
    const told = application({ volumes: [{ source: 'data', target: '/data' }], updateConfigCluster: { Parallelism: 1, Order: 'start-first' } });
    expect(swarmServiceSpec(told).UpdateConfig?.Order).toBe('start-first');
  });

  it('adds networkCluster targets after the platform network, merging repeated targets', () => {
    const spec = swarmServiceSpec(
      application({
        networks: ['b'],
        networkCluster: [{ Target: 'a' }, { Target: 'b', Aliases: ['x'] }, { Target: PLATFORM_NETWORK, Aliases: ['web'] }],
      }),
    );
    expect(spec.TaskTemplate.Networks).toEqual([
      { Target: 'skiff-network', Aliases: ['web'] },
      { Target: 'b', Aliases: ['x'] },
      { Target: 'a' },
    ]);
  });

  it('leaves the platform network when detachPlatformNetwork is set', () => {
    expect(swarmServiceSpec(cache({ detachPlatformNetwork: true })).TaskTemplate.Networks).toEqual([{ Target: 'legacy-net' }]);
  });

  it('passes health check, placement, stop grace period and ulimits through unchanged', () => {
    const spec = swarmServiceSpec(application(everyCluster));
    expect(spec.TaskTemplate.ContainerSpec.HealthCheck).toEqual(everyCluster.healthCheckCluster);
    expect(spec.TaskTemplate.Placement).toEqual(everyCluster.placementCluster);
    expect(spec.TaskTemplate.ContainerSpec.StopGracePeriod).toBe(30 * SECOND);
    expect(spec.TaskTemplate.ContainerSpec.Ulimits).toEqual(everyCluster.ulimitsCluster);
  });

  it('treats null cluster values as unset', () => {
    const nulls: Partial<WorkloadSpecInput> = {
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
      networks: null,
      ports: null,
      volumes: null,
      forceUpdate: null,
      detachPlatformNetwork: null,
    };
    expect(swarmServiceSpec(application(nulls))).toStrictEqual(swarmServiceSpec(application()));
  });

  it('never shares objects with its input', () => {
    const input = application(everyCluster);
    const spec = swarmServiceSpec(input);
    spec.TaskTemplate.ContainerSpec.HealthCheck!.Test.push('mutated');
    spec.TaskTemplate.Placement!.Constraints!.push('mutated');
    spec.TaskTemplate.ContainerSpec.Env.push('X=1');
    expect(input.healthCheckCluster!.Test).not.toContain('mutated');
    expect(input.placementCluster!.Constraints).not.toContain('mutated');
    expect(input.env).not.toContain('X=1');
  });
});

describe('command and args', () => {
  it('splits the command into an argv without a shell', () => {
    const spec = swarmServiceSpec(application({ command: `sh -c 'echo hi; rm -rf /' && "x y"` }));
    expect(spec.TaskTemplate.ContainerSpec.Command).toEqual(['sh', '-c', 'echo hi; rm -rf /', '&&', 'x y']);
  });

  it('passes args as Args, with or without a command', () => {
    const spec = swarmServiceSpec(application({ args: ['--flag', 'a b'] }));
    expect(spec.TaskTemplate.ContainerSpec.Args).toEqual(['--flag', 'a b']);
    expect(spec.TaskTemplate.ContainerSpec).not.toHaveProperty('Command');
  });

  it('omits a blank command and empty args, keeping the image defaults', () => {
    const spec = swarmServiceSpec(application({ command: '   ', args: [] }));
    expect(spec.TaskTemplate.ContainerSpec).not.toHaveProperty('Command');
    expect(spec.TaskTemplate.ContainerSpec).not.toHaveProperty('Args');
  });

  it('refuses an unterminated quote', () => {
    expect(() => swarmServiceSpec(application({ command: 'echo "oops' }))).toThrow(SwarmSpecError);
  });
});

describe('resources', () => {
  it('maps stored decimal strings to NanoCPUs and MemoryBytes', () => {
    const spec = swarmServiceSpec(application({ cpuLimit: '2000000000', memoryReservation: '104857600' }));
    expect(spec.TaskTemplate.Resources).toEqual({ Limits: { NanoCPUs: 2_000_000_000 }, Reservations: { MemoryBytes: 104_857_600 } });
  });

  it('treats empty and "0" as not set', () => {
    const spec = swarmServiceSpec(application({ cpuLimit: '', memoryLimit: '0', cpuReservation: ' ', memoryReservation: null }));
    expect(spec.TaskTemplate).not.toHaveProperty('Resources');
  });

  it('refuses values that are not whole numbers', () => {
    expect(() => swarmServiceSpec(application({ memoryLimit: '512m' }))).toThrow(
      new SwarmSpecError('memoryLimit must be a whole number of bytes, got "512m"'),
    );
    expect(() => swarmServiceSpec(application({ cpuReservation: '0.5' }))).toThrow(/cpuReservation must be a whole number of nano-CPUs/);
    expect(() => swarmServiceSpec(application({ cpuLimit: '-1' }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ cpuLimit: '99999999999999999999' }))).toThrow(SwarmSpecError);
  });

  it('refuses a memory limit below the engine minimum of 6 MiB', () => {
    expect(() => swarmServiceSpec(application({ memoryLimit: '1048576' }))).toThrow(/at least 6291456 bytes/);
    expect(swarmServiceSpec(application({ memoryLimit: '6291456' })).TaskTemplate.Resources).toEqual({ Limits: { MemoryBytes: 6291456 } });
  });
});

describe('refused input', () => {
  it('refuses an invalid image reference', () => {
    expect(() => swarmServiceSpec(application({ image: 'Not An Image' }))).toThrow(SwarmSpecError);
  });

  it('refuses env entries that are not KEY=VALUE, without showing them', () => {
    const run = () => swarmServiceSpec(application({ env: ['A=1', 'secret-without-equals'] }));
    expect(run).toThrow(new SwarmSpecError('env entry 2 is not KEY=VALUE'));
  });

  it('refuses bad replicas', () => {
    expect(() => swarmServiceSpec(application({ replicas: -1 }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ replicas: 1.5 }))).toThrow(SwarmSpecError);
  });

  it('refuses ingress ports with dnsrr and a port published twice', () => {
    expect(() =>
      swarmServiceSpec(application({ endpointSpecCluster: { Ports: [{ TargetPort: 80, PublishedPort: 80, PublishMode: 'ingress' }] } })),
    ).toThrow(/needs endpoint mode "vip"/);
    expect(() =>
      swarmServiceSpec(cache({ endpointSpecCluster: { Ports: [{ TargetPort: 6380, PublishedPort: 16379 }] } })),
    ).toThrow(new SwarmSpecError('Port 16379/tcp is published twice'));
    const udpAndTcp = cache({ endpointSpecCluster: { Ports: [{ TargetPort: 6379, PublishedPort: 16379, Protocol: 'udp' }] } });
    expect(swarmServiceSpec(udpAndTcp).EndpointSpec.Ports).toHaveLength(2);
  });

  it('refuses bad volumes, an empty name, id or platform network', () => {
    expect(() => swarmServiceSpec(application({ volumes: [{ source: '../x', target: '/data' }] }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ volumes: [{ source: 'x', target: 'data' }] }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ appName: '' }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ id: '' }))).toThrow(SwarmSpecError);
    expect(() => swarmServiceSpec(application({ platformNetwork: '' }))).toThrow(SwarmSpecError);
  });

  it('mounts binds after the named volumes, and refuses relative, `..` or `:` paths', () => {
    const spec = swarmServiceSpec(
      application({ volumes: [{ source: 'data', target: '/data' }], binds: [{ source: '/srv/shared', target: '/shared', readOnly: true }] }),
    );
    expect(spec.TaskTemplate.ContainerSpec.Mounts).toEqual([
      { Type: 'volume', Source: 'data', Target: '/data', VolumeOptions: { Labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': 'app_1' } } },
      { Type: 'bind', Source: '/srv/shared', Target: '/shared', ReadOnly: true },
    ]);
    for (const bind of [{ source: 'srv', target: '/x' }, { source: '/srv/../etc', target: '/x' }, { source: '/srv', target: 'x' }, { source: '/a:/b', target: '/x' }]) {
      expect(() => swarmServiceSpec(application({ binds: [bind] })), JSON.stringify(bind)).toThrow(SwarmSpecError);
    }
  });
});
