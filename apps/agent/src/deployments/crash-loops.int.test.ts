// Crash loops on the real engine: a busybox service that prints a line and exits after 1 s
// (restarted 1 s later), and one that keeps running. Services are named for this run.
import type { CrashLoop } from '@skiff/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_LABEL } from './deploy-spec.js';
import type { ServiceSpec } from '../docker/driver.js';
import { TestServices } from '../testing/swarm-services.js';
import { waitUntil } from '../testing/wait.js';
import { CrashLoopWatcher } from './crash-loops.js';

const services = new TestServices('skt-crash');
afterAll(() => services.cleanUp());

const deployed = (deploymentId: string) => (spec: ServiceSpec): ServiceSpec => ({
  ...spec,
  Labels: { ...spec.Labels, [DEPLOYMENT_LABEL]: deploymentId },
  TaskTemplate: {
    ...spec.TaskTemplate,
    ContainerSpec: { ...spec.TaskTemplate.ContainerSpec, Labels: { ...spec.TaskTemplate.ContainerSpec.Labels, [DEPLOYMENT_LABEL]: deploymentId } },
    RestartPolicy: { ...spec.TaskTemplate.RestartPolicy, Delay: 1_000_000_000 },
  },
});

describe('CrashLoopWatcher', () => {
  it('reports a service whose tasks keep exiting, once, with the last lines of the failing task', async () => {
    const crashing = await services.create({
      command: `sh -c 'echo starting ${services.run}; echo line two; sleep 1; echo giving up; exit 3'`,
      tweak: deployed('dep_crash_1'),
      wait: false,
    });
    const healthy = await services.create({ tweak: deployed('dep_fine_1') });
    const reports: CrashLoop[] = [];
    const watcher = new CrashLoopWatcher({
      driver: services.driver,
      report: (c) => reports.push(c),
      log: services.log,
      rule: { exits: 2, windowMs: 60_000 },
    });

    const found = await waitUntil('a crash loop', async () => (await watcher.look()).find((c) => c.workloadId === crashing.id), 60_000, 500);
    expect(found).toMatchObject({ deploymentId: 'dep_crash_1', windowSeconds: 60, reason: expect.stringMatching(/^task 1 failed: .*exit.*3/) });
    expect(found.exits).toBeGreaterThanOrEqual(2);
    expect(found.logLines.slice(-3)).toEqual([`starting ${services.run}`, 'line two', 'giving up']);

    // Once per deployment, and never the service that keeps running.
    await watcher.look();
    expect(reports.filter((c) => c.workloadId === crashing.id)).toHaveLength(1);
    expect(reports.some((c) => c.workloadId === healthy.id)).toBe(false);
  });
});
