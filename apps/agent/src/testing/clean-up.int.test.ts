import { randomBytes } from 'node:crypto';
import Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { CleanUp } from './clean-up.js';

const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });

describe('CleanUp', () => {
  it('takes what is already gone as removed, and goes on past a failed step to name it at the end', async () => {
    const gone = `skt-cleanup-${randomBytes(3).toString('hex')}`;
    const clean = new CleanUp(docker);
    await clean.services([gone]);
    await clean.network(gone);
    expect(() => clean.done()).not.toThrow();
    let after = false;
    await clean.step('registry', () => Promise.reject(new Error('still running')));
    await clean.step('next', async () => void (after = true));
    expect(after).toBe(true);
    expect(() => clean.done()).toThrow('clean-up left objects behind:\nregistry: Error: still running');
  });
});
