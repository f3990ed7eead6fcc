// At its start the agent removes the throw-away containers (verifications' and volume archives')
// that an earlier run left and no command will come back for, found by Skiff's own label whose
// value is the container's name; a container of the same image without it, or whose label is
// not its own name (an image's label inherited by a user's container), is kept, and so is
// another agent's on the same engine (its command is not in this agent's journal), even one of the
// same server id (two `tools/up` on one machine are both `local`) with its own data directory.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { EngineSocket } from '../docker/engine-socket.js';
import { ensureCommandStream } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';
import { DatabaseEngine } from '@skiff/proto';
import { DockerodeDatabaseContainers } from './database-containers.js';
import { DockerodeScratchDatabases } from './scratch-databases.js';
import { DockerodeVolumeContainers } from './volume-containers.js';

const run = randomBytes(3).toString('hex');
const names = {
  verify: `skiff-verify-leftover-${run}`,
  verifyTools: `skiff-verify-leftover-${run}-tools`,
  volume: `skiff-volume-leftover-${run}`,
  user: `lo-user-${run}`,
  inherited: `lo-inherited-${run}`,
  otherAgents: `skiff-verify-leftover-other-${run}`,
  sameServerId: `skiff-relay-leftover-twin-${run}`,
};
const volume = `lo-volume-${run}`;
const serverId = `srv-lo-${run}`;
// As main.ts labels them: the server id and the instance of the agent's data directory (throwaway-owner.ts).
const owner = `${serverId}/${'a'.repeat(16)}`;
const docker = (...args: string[]) => execFileSync('/usr/bin/docker', args, { encoding: 'utf8' }).trim();
const exists = (name: string) => {
  try {
    execFileSync('/usr/bin/docker', ['container', 'inspect', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

afterAll(() => {
  for (const name of Object.values(names)) if (exists(name)) docker('rm', '-f', name);
  docker('volume', 'rm', '-f', volume);
});

describe('leftover throw-away containers', () => {
  it('are removed at the agent’s start; a user’s container of the same image is kept', { timeout: 60_000 }, async () => {
    const engine = new Dockerode({ socketPath: '/var/run/docker.sock' });
    // Made as this agent's commands make them (the busybox "database" exits at once: a leftover all the same).
    await new DockerodeScratchDatabases(engine, { owner }).start(names.verify, 'busybox:latest', DatabaseEngine.DATABASE_ENGINE_POSTGRES, 'db');
    docker('create', '--name', names.verifyTools, '--label', `skiff.verify=${names.verifyTools}`, '--label', `skiff.agent=${owner}`, 'busybox:latest', 'true');
    docker('volume', 'create', volume);
    await new DockerodeVolumeContainers(engine, { owner }).start(volume, true, `leftover-${run}`);
    // A verification another agent on this engine runs right now.
    docker('run', '-d', '--name', names.otherAgents, '--label', `skiff.verify=${names.otherAgents}`, '--label', `skiff.agent=srv-other-${run}`, 'busybox:latest', 'sleep', '60');
    // A relay of another agent with this server id, whose restore runs through it right now.
    docker('run', '-d', '--name', names.sameServerId, '--label', `skiff.relay=${names.sameServerId}`, '--label', `skiff.agent=${serverId}/${'b'.repeat(16)}`, 'busybox:latest', 'sleep', '60');
    docker('create', '--name', names.user, 'busybox:latest', 'sleep', '60');
    docker('create', '--name', names.inherited, '--label', 'skiff.verify=skiff-verify-someone', 'busybox:latest', 'sleep', '60');

    const nc = await connect({ servers: inject('natsUrl') });
    await ensureCommandStream(nc);
    const reportServer = await startReportServer();
    const folder = mkdtempSync(join(tmpdir(), 'skiff-leftovers-'));
    const { agent, stop } = await startTestAgent({
      serverId,
      nc,
      driver: new DockerodeDriver(),
      throwawayOwner: owner,
      scratch: new DockerodeScratchDatabases(engine, { owner }),
      volumes: new DockerodeVolumeContainers(engine, { owner }),
      databases: new DockerodeDatabaseContainers(engine, { owner }),
      leftovers: new EngineSocket({ socketPath: '/var/run/docker.sock', timeoutMs: 30_000 }),
      journalDir: join(folder, 'agent'),
      reportTarget: reportServer.target,
      credential: `cred-${run}`,
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      maxConcurrentDeploys: 1,
    });
    try {
      await waitUntil('the leftovers removed', () => !exists(names.verify) && !exists(names.verifyTools) && !exists(names.volume));
      await agent.leftoversSwept;
      expect(exists(names.user)).toBe(true);
      expect(exists(names.inherited)).toBe(true);
      expect(exists(names.otherAgents)).toBe(true);
      expect(exists(names.sameServerId)).toBe(true);
    } finally {
      await stop();
      await reportServer.stop();
      await nc.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
