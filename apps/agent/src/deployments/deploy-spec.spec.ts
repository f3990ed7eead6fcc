import { LEGACY_SPEC_REFUSAL, PLATFORM_NETWORK, SwarmSpecError, workloadSpecToWire } from '@skiff/domain';
import { WorkloadKind, type DeployApplication } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_LABEL, DeploySpecError, deployServiceSpec, workloadSpecInput } from './deploy-spec.js';

function aDeploy(overrides: Partial<DeployApplication> = {}): DeployApplication {
  return {
    deploymentId: 'dep1',
    workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app1', appName: 'web-1' },
    image: 'busybox:latest',
    env: { B: '2', A: 's3cret' },
    replicas: 0,
    forcePull: false,
    keepImages: [],
    localImage: false,
    files: [],
    specJson: JSON.stringify({ command: "sh -c 'sleep 600'", image: 'ignored:1', env: ['X=ignored'], replicas: 9 }),
    ...overrides,
  };
}

describe('workloadSpecInput', () => {
  it("takes spec_json, then the command's image, env, replicas and workload", () => {
    expect(workloadSpecInput(aDeploy())).toEqual({
      appName: 'web-1',
      id: 'app1',
      kind: 'application',
      image: 'busybox:latest',
      env: ['A=s3cret', 'B=2'],
      replicas: 1,
      command: "sh -c 'sleep 600'",
      args: null,
      memoryLimit: null,
      memoryReservation: null,
      cpuLimit: null,
      cpuReservation: null,
      platformNetwork: PLATFORM_NETWORK,
    });
    expect(workloadSpecInput(aDeploy({ replicas: 3, specJson: '' })).replicas).toBe(3);
  });

  it('refuses spec_json that is not a JSON object or names another workload', () => {
    expect(() => workloadSpecInput(aDeploy({ specJson: '{' }))).toThrow(DeploySpecError);
    expect(() => workloadSpecInput(aDeploy({ specJson: '[]' }))).toThrow('spec_json must be a JSON object');
    expect(() => workloadSpecInput(aDeploy({ specJson: '{"appName":"other"}' }))).toThrow(
      'spec_json names service "other" but the command deploys "web-1"',
    );
    expect(() => workloadSpecInput(aDeploy({ specJson: '{"id":"x"}' }))).toThrow(DeploySpecError);
    expect(() => workloadSpecInput(aDeploy({ specJson: '{"kind":"cache"}' }))).toThrow(DeploySpecError);
    expect(() => workloadSpecInput(aDeploy({ workload: undefined }))).toThrow('the command names no workload');
  });
});

describe('workloadSpecInput of a command with the typed spec', () => {
  const settings = {
    appName: 'ignored',
    kind: 'application' as const,
    id: 'ignored',
    image: 'ignored:1',
    env: ['X=ignored'],
    command: 'httpd -f',
    args: ['-p', '8080'],
    replicas: 0,
    memoryLimit: '104857600',
    memoryReservation: null,
    cpuLimit: null,
    cpuReservation: null,
    platformNetwork: PLATFORM_NETWORK,
    endpointSpecCluster: { Ports: [{ TargetPort: 8080, PublishedPort: 18080 }] },
  };

  it("takes the spec's settings with the command's workload, image and env, and never spec_json", () => {
    const deploy = aDeploy({ spec: workloadSpecToWire(settings), specJson: LEGACY_SPEC_REFUSAL });
    expect(workloadSpecInput(deploy)).toEqual({
      ...settings,
      appName: 'web-1',
      id: 'app1',
      image: 'busybox:latest',
      env: ['A=s3cret', 'B=2'],
      replicas: 1,
    });
    expect(workloadSpecInput(aDeploy({ spec: workloadSpecToWire({ ...settings, replicas: 3 }) })).replicas).toBe(3);
  });

  it('leaves an agent that reads only spec_json refusing the deploy, naming what to do', () => {
    expect(() => workloadSpecInput(aDeploy({ specJson: LEGACY_SPEC_REFUSAL }))).toThrow(/update the agent/);
  });
});

describe('workloadSpecInput of a cache instance', () => {
  const cache = { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'rds1', appName: 'sessions' };

  it('takes the kind from the workload, and spec_json must agree', () => {
    expect(workloadSpecInput(aDeploy({ workload: cache, specJson: '{"kind":"cache"}' })).kind).toBe('cache');
    expect(deployServiceSpec(aDeploy({ workload: cache, specJson: '' })).Labels['skiff.kind']).toBe('cache');
    expect(() => workloadSpecInput(aDeploy({ workload: cache, specJson: '{"kind":"application"}' }))).toThrow(
      'spec_json has kind "application" but the command deploys a workload of kind cache',
    );
  });

  it('refuses a workload kind that is not one Swarm service', () => {
    const compose = { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'cmp1', appName: 'stack' };
    expect(() => workloadSpecInput(aDeploy({ workload: compose }))).toThrow(DeploySpecError);
  });
});

describe('deployServiceSpec', () => {
  it('labels the service and its containers with the deployment', () => {
    const spec = deployServiceSpec(aDeploy());
    expect(spec.Name).toBe('web-1');
    expect(spec.Labels).toEqual({
      'skiff.managed': 'true',
      'skiff.kind': 'application',
      'skiff.id': 'app1',
      [DEPLOYMENT_LABEL]: 'dep1',
    });
    expect(spec.TaskTemplate.ContainerSpec).toMatchObject({
      Image: 'busybox:latest',
      Command: ['sh', '-c', 'sleep 600'],
      Env: ['A=s3cret', 'B=2'],
      Labels: { 'skiff.managed': 'true', [DEPLOYMENT_LABEL]: 'dep1' },
    });
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: PLATFORM_NETWORK }]);
  });

  it("keeps a user's label out of the skiff.deployment key", () => {
    const spec = deployServiceSpec(aDeploy({ specJson: JSON.stringify({ labelsCluster: { 'skiff.deployment': 'forged', team: 'a' } }) }));
    expect(spec.Labels[DEPLOYMENT_LABEL]).toBe('dep1');
    expect(spec.Labels.team).toBe('a');
  });

  it("passes on the domain's refusals", () => {
    expect(() => deployServiceSpec(aDeploy({ image: 'Not An Image' }))).toThrow(SwarmSpecError);
    expect(() => deployServiceSpec(aDeploy({ specJson: '{"memoryLimit":"100"}' }))).toThrow(/memoryLimit must be at least/);
    expect(() => deployServiceSpec(aDeploy({ deploymentId: '' }))).toThrow(DeploySpecError);
  });

  it('binds the command\'s files read-only from the files folder, which they need', () => {
    const deploy = aDeploy({ files: [{ path: 'conf/app.env', content: 's3cret', target: '/etc/app.env' }] });
    expect(deployServiceSpec(deploy, '/var/lib/skiff/applications/app1/files').TaskTemplate.ContainerSpec.Mounts).toEqual([
      { Type: 'bind', Source: '/var/lib/skiff/applications/app1/files/conf/app.env', Target: '/etc/app.env', ReadOnly: true },
    ]);
    expect(() => deployServiceSpec(deploy)).toThrow(/data directory/);
    expect(() => deployServiceSpec(aDeploy({ files: [{ path: '../x', content: '', target: '/x' }] }), '/d')).toThrow(/relative/);
  });
});
