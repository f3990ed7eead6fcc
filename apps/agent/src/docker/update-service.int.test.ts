// DockerodeDriver.updateService against the real engine: read, change, write back.
import { afterAll, describe, expect, it } from 'vitest';
import { TestServices } from '../testing/swarm-services.js';
import { DockerConflictError, DockerInvalidError } from './errors.js';

const t = new TestServices('skt-upd');
afterAll(() => t.cleanUp(), 60_000);

describe('DockerodeDriver.updateService', () => {
  it("hands over the engine's whole spec and writes the changed one, keeping what it did not touch", async () => {
    const svc = await t.create();
    const before = (await t.spec(svc.name))!;
    const result = await t.driver.updateService(svc.name, (spec) => ({ ...spec, Labels: { ...spec.Labels, 'skiff.note': 'x' } }));
    expect(result).toMatchObject({ name: svc.name, changed: true, labels: { 'skiff.note': 'x' } });
    const after = (await t.spec(svc.name))!;
    expect(after.TaskTemplate).toEqual(before.TaskTemplate);
    expect(after.EndpointSpec).toEqual(before.EndpointSpec);
    expect(after.Mode).toEqual(before.Mode);

    const unchanged = await t.driver.updateService(svc.name, () => null);
    expect(unchanged).toMatchObject({ changed: false, version: result!.version });
  }, 60_000);

  it('answers null for a missing service and refuses what is not Skiff-managed or drops the label', async () => {
    expect(await t.driver.updateService(`skt-upd-missing-${t.run}`, () => null)).toBeNull();
    const svc = await t.create({ wait: false });
    await expect(
      t.driver.updateService(svc.name, (spec) => ({ ...spec, Labels: { team: 'a' } })),
    ).rejects.toBeInstanceOf(DockerInvalidError);

    const name = t.name();
    await t.docker.createService({
      Name: name,
      TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Command: ['sleep', '600'] } },
      Mode: { Replicated: { Replicas: 0 } },
    });
    await expect(t.driver.updateService(name, (spec) => spec)).rejects.toBeInstanceOf(DockerConflictError);
    await expect(t.driver.updateService('bad name!', () => null)).rejects.toBeInstanceOf(DockerInvalidError);
  }, 60_000);
});
