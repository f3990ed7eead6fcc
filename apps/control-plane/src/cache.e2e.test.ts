// A Redis cache instance end to end (testing/stack.ts: API, outbox relay, NATS, report
// server, the agent process and the swarm; the local redis:8 image): deployed with an
// external port, reached with its password over RESP on a plain TCP socket, its data kept
// across reload and rebuild, stopped, started and removed with its volume.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheVolumeName } from './services/caches/index.js';
import { redis } from './testing/redis-client.js';
import { docker, freePort, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
const volumes: string[] = [];
beforeAll(async () => {
  s = await startTestStack('cache');
}, 120_000);
afterAll(async () => {
  await s?.close();
  // Once its service is gone, a volume left by a failed test goes too.
  for (const volume of volumes) {
    await waitFor(async () => (await docker(['volume', 'rm', volume])).ok || !(await docker(['volume', 'inspect', volume])).ok, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: `volume ${volume} to be removed`,
    }).catch(() => undefined);
  }
}, 90_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await s.t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

const PASSWORD = 'e2e pass "$(not a command)';
/** `PING` and `GET key` after logging in with `password`. */
const pingAndGet = (port: number, key: string, password = PASSWORD) => redis(port, [['AUTH', password], ['PING'], ['GET', key]]);

describe('a Redis cache instance', () => {
  it('answers with its password on its port, keeps its data across reload and rebuild, stops, starts and is removed with its volume', async () => {
    const port = await freePort();
    const c = await ok('cache.create', { name: 'sessions', appName: `sessions-${s.run}`, databasePassword: PASSWORD, environmentId: s.environmentId });
    const { cacheId, appName } = c as { cacheId: string; appName: string };
    s.services.push(appName);
    const volume = cacheVolumeName(cacheId);
    volumes.push(volume);
    await ok('cache.update', {
      cacheId,
      // Quick rolling updates: a rollout waits out the engine's monitor period.
      updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 500_000_000 },
    });
    await ok('cache.saveExternalPort', { cacheId, externalPort: port });

    /** Waits until the instance has the status, after `op` was accepted. */
    const settle = (wanted: string, what: string) =>
      waitFor(
        async () => {
          const status = (await ok('cache.one', { cacheId })).applicationStatus;
          if (status === 'error') throw new Error(`the cache went into error during ${what} (agent output: ${s.agentOutput().slice(-2000)})`);
          return status === wanted;
        },
        { timeoutMs: 120_000, intervalMs: 250, what: () => `${what} to end in ${wanted} (agent output: ${s.agentOutput().slice(-2000)})` },
      );
    const answers = (what: string, key: string, value: string | null) =>
      waitFor(async () => JSON.stringify(await pingAndGet(port, key)) === JSON.stringify(['OK', 'PONG', value]), {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: `the cache to answer ${what}`,
      });
    const serviceId = async () => (await docker(['service', 'inspect', appName, '--format', '{{.ID}}'])).out;

    // Deploy: it answers PING with the password, and keeps what it is given.
    await ok('cache.deploy', { cacheId });
    await settle('done', 'the deploy');
    await answers('after the deploy', 'greeting', null);
    expect(await redis(port, [['AUTH', PASSWORD], ['SET', 'greeting', 'hello from skiff'], ['GET', 'greeting']])).toEqual(['OK', 'OK', 'hello from skiff']);

    // A wrong password, or none, is refused.
    const wrong = await pingAndGet(port, 'greeting', 'not-the-password');
    expect(wrong?.[0]).toMatch(/^-WRONGPASS/);
    expect(wrong?.[1]).toMatch(/^-NOAUTH/);
    expect((await redis(port, [['GET', 'greeting']]))?.[0]).toMatch(/^-NOAUTH/);

    // The service runs the image with the volume, the password in no argument.
    const spec = JSON.parse((await docker(['service', 'inspect', appName, '--format', '{{json .Spec}}'])).out);
    expect(spec.TaskTemplate.ContainerSpec.Image).toMatch(/^redis:8/);
    expect(spec.TaskTemplate.ContainerSpec.Mounts).toMatchObject([{ Type: 'volume', Source: volume, Target: '/data' }]);
    expect(JSON.stringify(spec.TaskTemplate.ContainerSpec.Args)).not.toContain(PASSWORD);
    expect((await docker(['volume', 'inspect', volume, '--format', '{{index .Labels "skiff.id"}}'])).out).toBe(cacheId);

    // Reload: a new task, the same data.
    await ok('cache.reload', { cacheId, appName });
    await waitFor(
      async () => {
        const [row] = await s.t.db
          .selectFrom('commands')
          .select(['status', 'resultReason'])
          .where('workloadKey', '=', `cache:${cacheId}`)
          .where('kind', '=', 'COMMAND_KIND_RELOAD_WORKLOAD')
          .execute();
        if (row?.status === 'failed') throw new Error(`the reload failed: ${row.resultReason}`);
        return row?.status === 'done';
      },
      { timeoutMs: 120_000, intervalMs: 250, what: () => `the reload to end (agent output: ${s.agentOutput().slice(-2000)})` },
    );
    await answers('after the reload', 'greeting', 'hello from skiff');

    // Rebuild: a new service on the same volume, the same data.
    const before = await serviceId();
    await ok('cache.rebuild', { cacheId });
    await settle('done', 'the rebuild');
    await answers('after the rebuild', 'greeting', 'hello from skiff');
    expect(await serviceId()).not.toBe(before);

    // Stop: idle, and nothing answers; start: done, and it answers again with its data.
    await ok('cache.stop', { cacheId });
    await settle('idle', 'the stop');
    await waitFor(async () => (await pingAndGet(port, 'greeting')) === null, { timeoutMs: 30_000, intervalMs: 250, what: 'the port to stop answering' });
    await ok('cache.start', { cacheId });
    await settle('done', 'the start');
    await answers('after the start', 'greeting', 'hello from skiff');

    // Remove: the record goes once the service and its volume are gone.
    await ok('cache.remove', { cacheId });
    await waitFor(async () => (await s.t.call('cache.one', { cacheId })).status === 404, {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: () => `the cache to be removed (agent output: ${s.agentOutput().slice(-2000)})`,
    });
    expect((await docker(['service', 'inspect', appName])).ok).toBe(false);
    expect((await docker(['volume', 'inspect', volume])).ok).toBe(false);
    expect(await pingAndGet(port, 'greeting')).toBeNull();
  }, 600_000);
});
