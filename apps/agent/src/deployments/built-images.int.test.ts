// Pruning an application's built images on the real Docker Engine: images made here from
// the local busybox:latest (distinct by a label), removed afterwards whatever happened.
import { randomBytes } from 'node:crypto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { builtImageLabels, pruneBuiltImages } from './built-images.js';

const run = randomBytes(4).toString('hex');
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });
const log = pino({ level: 'silent' });
const repo = `skt-built-${run}`;
const made: string[] = [];
const containers: string[] = [];

/** An image as a build makes one: `<appName>:<deploymentId>`, with the workload's labels. */
async function builtImage(tag: string, labels: Record<string, string>): Promise<string> {
  const base = docker.getContainer((await docker.createContainer({ Image: 'busybox:latest', Cmd: ['true'] })).id);
  try {
    await base.commit({ repo, tag, changes: Object.entries({ ...labels, 'skiff.deployment': tag }).map(([k, v]) => `LABEL ${k}=${v}`) });
  } finally {
    await base.remove({ force: true });
  }
  made.push(`${repo}:${tag}`);
  return `${repo}:${tag}`;
}

const exists = async (ref: string) => driver.imageExists(ref);

afterAll(async () => {
  for (const c of containers) await docker.getContainer(c).remove({ force: true }).catch(() => {});
  for (const ref of made) await docker.getImage(ref).remove({ force: true }).catch(() => {});
});

describe('pruneBuiltImages', () => {
  it("removes the workload's built images but those kept and those a container uses; never another's", async () => {
    const mine = builtImageLabels(`app-${run}`);
    const d1 = await builtImage('d1', mine);
    const d2 = await builtImage('d2', mine);
    const d3 = await builtImage('d3', mine);
    const used = await builtImage('used', mine);
    const other = await builtImage('other', builtImageLabels(`other-${run}`));
    containers.push((await docker.createContainer({ Image: used, Cmd: ['true'] })).id);

    const removed = await pruneBuiltImages(driver, `app-${run}`, [d3, `${d2}@sha256:${'0'.repeat(64)}`, null], log);
    expect(removed).toEqual([d1]);
    expect(await exists(d1)).toBe(false);
    for (const ref of [d2, d3, used, other]) expect(await exists(ref)).toBe(true);

    // The application removed: none of its images stay (the one a container uses aside).
    expect((await pruneBuiltImages(driver, `app-${run}`, [], log)).sort()).toEqual([d2, d3].sort());
    expect(await exists(used)).toBe(true);
    expect(await exists(other)).toBe(true);
  });

  it('leaves images Skiff did not build, even with the same labels asked for', async () => {
    const foreign = await builtImage('foreign', { 'skiff.kind': 'application', 'skiff.id': `app-${run}-f` });
    expect(await pruneBuiltImages(driver, `app-${run}-f`, [], log)).toEqual([]);
    expect(await exists(foreign)).toBe(true);
  });
});
