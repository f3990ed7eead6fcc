import { WorkloadSpec } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { PLATFORM_NETWORK, swarmServiceSpec, type WorkloadSpecInput } from './swarm-spec.js';
import { LEGACY_SPEC_REFUSAL, workloadSpecFromWire, workloadSpecToWire } from './workload-spec-wire.js';

const SECOND = 1_000_000_000;

const minimal: WorkloadSpecInput = {
  appName: 'web',
  kind: 'application',
  id: 'app_1',
  image: 'busybox:latest',
  env: ['A=1'],
  command: null,
  args: null,
  replicas: 1,
  memoryLimit: null,
  memoryReservation: null,
  cpuLimit: null,
  cpuReservation: null,
  platformNetwork: PLATFORM_NETWORK,
};

const everySetting: WorkloadSpecInput = {
  ...minimal,
  kind: 'cache',
  command: `node --enable-source-maps "dist/main server.js"`,
  args: ['--port', '3000'],
  replicas: 2,
  memoryLimit: '536870912',
  memoryReservation: '268435456',
  cpuLimit: '1500000000',
  cpuReservation: '250000000',
  networks: ['legacy-net'],
  ports: [{ TargetPort: 6379, PublishedPort: 16379 }],
  volumes: [{ source: 'data-1', target: '/data', readOnly: true }],
  forceUpdate: 3,
  healthCheckCluster: { Test: ['CMD', 'true'], Interval: 10 * SECOND, Timeout: 3 * SECOND, StartPeriod: 20 * SECOND, StartInterval: SECOND, Retries: 3 },
  restartPolicyCluster: { Condition: 'on-failure', Delay: 0, MaxAttempts: 5, Window: 60 * SECOND },
  placementCluster: {
    Constraints: ['node.role==worker'],
    Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }],
    MaxReplicas: 1,
    Platforms: [{ Architecture: 'amd64', OS: 'linux' }],
  },
  updateConfigCluster: { Parallelism: 2, Delay: 2 * SECOND, Monitor: 0, MaxFailureRatio: 0.5, Order: 'stop-first', FailureAction: 'pause' },
  rollbackConfigCluster: { Parallelism: 0, FailureAction: 'continue' },
  modeCluster: { Replicated: { Replicas: 4 } },
  labelsCluster: { team: 'shop', 'skiff.kind': 'compose' },
  networkCluster: [{ Target: 'shared-db', Aliases: ['web'], DriverOpts: { mtu: '1400' } }, { Target: PLATFORM_NETWORK }],
  stopGracePeriodCluster: 30 * SECOND,
  endpointSpecCluster: { Mode: 'vip', Ports: [{ TargetPort: 3000, PublishedPort: 8080, PublishMode: 'ingress' }, { TargetPort: 9090, Protocol: 'udp', Name: 'metrics' }] },
  ulimitsCluster: [{ Name: 'nofile', Soft: 1024, Hard: 65536 }],
};

/** Through the wire as the agent receives it: encoded, decoded, mapped back. */
function roundTrip(input: WorkloadSpecInput): WorkloadSpecInput {
  const bytes = WorkloadSpec.encode(workloadSpecToWire(input)).finish();
  const { appName, kind, id, image, env } = input;
  return workloadSpecFromWire(WorkloadSpec.decode(bytes), { appName, kind, id, image, env });
}

/** The value without empty arrays and objects, at any depth. */
function withoutEmpties(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmpties);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value)
    .map(([k, v]) => [k, withoutEmpties(v)] as const)
    .filter(([, v]) => !(v !== null && typeof v === 'object' && Object.keys(v).length === 0));
  return Object.fromEntries(entries);
}

describe('the workload spec on the wire', () => {
  it('comes back with every setting', () => {
    expect(roundTrip(everySetting)).toStrictEqual(everySetting);
    expect(roundTrip(minimal)).toStrictEqual(minimal);
  });

  it('gives the same Swarm service spec', () => {
    for (const mode of [{ Global: {} }, { ReplicatedJob: { MaxConcurrent: 2, TotalCompletions: 5 } }, { GlobalJob: {} }, { Replicated: {} }] as const) {
      const input = { ...everySetting, modeCluster: mode, endpointSpecCluster: null, ports: null } as WorkloadSpecInput;
      expect(swarmServiceSpec(roundTrip(input))).toStrictEqual(swarmServiceSpec(input));
    }
  });

  it('drops only empty lists and maps, which the engine reads as absent', () => {
    const sparse: WorkloadSpecInput = { ...minimal, args: [], command: '', networkCluster: [{ Target: 'x', Aliases: [] }], placementCluster: { Constraints: [] } };
    expect(withoutEmpties(swarmServiceSpec(roundTrip(sparse)))).toStrictEqual(withoutEmpties(swarmServiceSpec(sparse)));
    expect(swarmServiceSpec(roundTrip(sparse)).TaskTemplate.Networks).toEqual([{ Target: PLATFORM_NETWORK }, { Target: 'x' }]);
  });

  it('leaves in the superseded spec_json a kind that no agent deploys', () => {
    expect(JSON.parse(LEGACY_SPEC_REFUSAL).kind).toMatch(/update the agent/);
  });
});
