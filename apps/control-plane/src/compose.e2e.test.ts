// Compose stacks end to end (testing/stack.ts: API, outbox relay, NATS, report server, the
// agent process, the engine and its swarm; Debian's docker-compose v1 and the local busybox
// and redis:8 images): a web service and a Redis from raw YAML, run by Compose and as a
// Swarm stack, reached on their host ports (Redis over RESP with its password), redeployed
// with their data kept, stopped, started and deleted with or without their volumes; a plain,
// a randomized and an isolated copy of one file side by side; a domain on a compose service
// through the reverse proxy.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listPorts } from '@skiff/domain';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answers as proxyAnswers } from './testing/proxy-client.js';
import { redis } from './testing/redis-client.js';
import { docker, freePort, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
/** appNames of the stacks the tests created: whatever of them a failed test left is removed after all. */
const stacks: string[] = [];
beforeAll(async () => {
  s = await startTestStack('compose');
}, 120_000);
afterAll(async () => {
  await s?.close();
  for (const appName of stacks) await removeLeftovers(appName);
}, 120_000);

/** Everything of a stack still on the engine, found by the labels Compose and `docker stack` put on it, and its own network. */
async function removeLeftovers(appName: string) {
  await docker(['stack', 'rm', appName]);
  const labels = [`com.docker.compose.project=${appName}`, `com.docker.stack.namespace=${appName}`];
  const ids = async (args: string[]) => {
    const all = await Promise.all(labels.map(async (label) => (await docker([...args, '--filter', `label=${label}`])).out.split(/\s+/).filter(Boolean)));
    return [...new Set(all.flat())];
  };
  const containers = await ids(['ps', '-aq']);
  if (containers.length > 0) await docker(['rm', '-f', '-v', ...containers]);
  // Swarm removes a stack's containers on its own time; its volumes and networks go after them.
  await waitFor(async () => (await ids(['ps', '-aq'])).length === 0, { timeoutMs: 60_000, intervalMs: 500, what: `the containers of ${appName} to go` }).catch(() => undefined);
  for (const kind of ['network', 'volume']) {
    const names = await ids([kind, 'ls', '-q']);
    if (names.length > 0) await docker([kind, 'rm', ...names]);
  }
  await docker(['network', 'rm', appName]);
}

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await s.t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

const agentTail = () => s.agentOutput().slice(-3000);

interface Stack {
  composeId: string;
  appName: string;
}

/** A raw stack `<name>-<run>` of `composeType` with `file` (given with compose.update). */
async function createStack(name: string, composeType: 'container-compose' | 'stack', file: string): Promise<Stack> {
  const appName = `${name}-${s.run}`;
  stacks.push(appName);
  const created = await ok('compose.create', { name, appName, environmentId: s.environmentId, sourceType: 'raw', composeType });
  const { composeId } = created as { composeId: string };
  const updated = await ok('compose.update', { composeId, composeFile: file });
  expect(updated.composeFile).toBe(file);
  return { composeId, appName };
}

/** Queues a deploy (or redeploy), waits until its deployment ends, and expects it done, with its log. */
async function deployAndWait(stack: Stack, op: 'compose.deploy' | 'compose.redeploy' = 'compose.deploy') {
  const { deploymentId } = (await ok(op, { composeId: stack.composeId })) as { deploymentId: string };
  const ended = await waitFor(
    async () => {
      const all = (await ok('deployment.allByCompose', { composeId: stack.composeId })) as { deploymentId: string; status: string; composeId: string }[];
      const mine = all.find((d) => d.deploymentId === deploymentId);
      return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `deployment ${deploymentId} of ${stack.appName} to end (agent output: ${agentTail()})` },
  );
  const { log } = (await ok('deployment.readLogs', { deploymentId })) as { log: string };
  expect(ended.status, `the deployment of ${stack.appName} ended ${ended.status}; its log:\n${log}`).toBe('done');
  expect(ended.composeId).toBe(stack.composeId);
  expect(log).toContain('Deployment done');
  // The stack's status follows its deployments.
  await settle(stack, 'done', 'the deploy');
  return log;
}

/** Waits until the stack has the status (after an operation was accepted). */
const settle = (stack: Stack, wanted: string, what: string) =>
  waitFor(async () => (await ok('compose.one', { composeId: stack.composeId })).applicationStatus === wanted, {
    timeoutMs: 120_000,
    intervalMs: 250,
    what: `${stack.appName} to be ${wanted} after ${what} (agent output: ${agentTail()})`,
  });

/** Deletes the stack and waits until its record is gone (the agent removed its objects). */
async function deleteAndWait(stack: Stack, deleteVolumes: boolean) {
  const deleted = await ok('compose.delete', { composeId: stack.composeId, deleteVolumes });
  expect(deleted.deleteVolumes).toBe(deleteVolumes);
  await waitFor(async () => (await s.t.call('compose.one', { composeId: stack.composeId })).status === 404, {
    timeoutMs: 120_000,
    intervalMs: 250,
    what: `${stack.appName} to be deleted (agent output: ${agentTail()})`,
  });
}

/** The body of GET `path` on a host port, or null while nothing answers. */
async function get(port: number, path = '/'): Promise<string | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? (await res.text()).trim() : null;
  } catch {
    return null;
  }
}

const serves = (port: number, body: string, path = '/') =>
  waitFor(async () => (await get(port, path)) === body, { timeoutMs: 60_000, intervalMs: 250, what: `port ${port} to serve ${JSON.stringify(body)} at ${path}` });

const PASSWORD = 'compose-e2e-secret';
/** `PING` and `GET key` after logging in. */
const pingAndGet = (port: number, key: string) => redis(port, [['AUTH', PASSWORD], ['PING'], ['GET', key]]);
const redisAnswers = (port: number, key: string, value: string | null) =>
  waitFor(async () => JSON.stringify(await pingAndGet(port, key)) === JSON.stringify(['OK', 'PONG', value]), {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `the Redis on port ${port} to answer PONG and ${key}=${JSON.stringify(value)}`,
  });
/** Sets the key and writes the data set to disk, so a new container on the same volume finds it. */
async function setKey(port: number, key: string, value: string) {
  expect(await redis(port, [['AUTH', PASSWORD], ['SET', key, value], ['SAVE']])).toEqual(['OK', 'OK', 'OK']);
}

const nothingAnswers = (web: number, cache: number) =>
  waitFor(async () => (await get(web)) === null && (await pingAndGet(cache, 'k')) === null, {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `ports ${web} and ${cache} to stop answering`,
  });

/** A YAML double-quoted scalar. */
const q = (text: string) => JSON.stringify(text);

interface FileOptions {
  /** Plain words (the shell echoes them). */
  page: string;
  webPort?: number;
  cachePort?: number;
  /** Swarm: long port syntax with host mode, and dnsrr endpoints. */
  swarm?: boolean;
  /** Changes the Redis service's definition, so a redeploy gives it a new container. */
  revision?: number;
  /** The web service also mounts `./kept` and shows (as /first.txt) the first page it ever served. */
  keptBind?: boolean;
}

/**
 * A web service (busybox httpd on 8080 serving `page`) and a Redis (`cache`, password
 * PASSWORD, its data in the named volume `data`), published on the host's ports when given.
 */
function webAndRedis(o: FileOptions): string {
  const ports = (target: number, published: number | undefined) => {
    if (published === undefined) return [];
    if (o.swarm) return ['    ports:', `      - target: ${target}`, `        published: ${published}`, '        protocol: tcp', '        mode: host'];
    return ['    ports:', `      - ${q(`127.0.0.1:${published}:${target}`)}`];
  };
  const deploy = o.swarm ? ['    deploy:', '      endpoint_mode: dnsrr'] : [];
  const script = [
    'mkdir -p /www',
    `echo ${o.page} > /www/index.html`,
    ...(o.keptBind ? [`if [ ! -f /kept/first ]; then echo ${o.page} > /kept/first; fi`, 'cp /kept/first /www/first.txt'] : []),
    'exec httpd -f -p 8080 -h /www',
  ].join(' && ');
  return [
    'services:',
    '  web:',
    '    image: busybox:latest',
    `    command: ["sh", "-c", ${q(script)}]`,
    // httpd, as PID 1, ignores SIGTERM: no use waiting the default 10 s before it is killed.
    '    stop_grace_period: 1s',
    ...ports(8080, o.webPort),
    ...(o.keptBind ? ['    volumes:', '      - ./kept:/kept'] : []),
    ...deploy,
    '  cache:',
    '    image: redis:8',
    `    command: ["redis-server", "--requirepass", ${q(PASSWORD)}, "--dir", "/data", "--protected-mode", "no"]`,
    '    environment:',
    `      REVISION: ${q(String(o.revision ?? 1))}`,
    ...ports(6379, o.cachePort),
    '    volumes:',
    '      - data:/data',
    ...deploy,
    'volumes:',
    '  data: {}',
    '',
  ].join('\n');
}

/** The container ids of a Compose project's service. */
const containersOf = async (appName: string, service: string) =>
  (
    await docker(['ps', '-aq', '--filter', `label=com.docker.compose.project=${appName}`, '--filter', `label=com.docker.compose.service=${service}`])
  ).out
    .split(/\s+/)
    .filter(Boolean);

const volumeExists = async (name: string) => (await docker(['volume', 'inspect', name])).ok;

describe('compose stacks', () => {
  it('runs a web service and a Redis with Compose: deployed, reached, redeployed with its data kept, stopped, started, deleted keeping its volume', async () => {
    const [webPort, cachePort] = [await freePort(), await freePort()];
    const file = (page: string, revision: number) => webAndRedis({ page, webPort, cachePort, revision, keptBind: true });
    const stack = await createStack('pair', 'container-compose', file('first page', 1));

    const log = await deployAndWait(stack);
    expect(log).toContain(`project ${stack.appName}`);
    // The agent reported the ports its file publishes (over gRPC): they are the stack's in other workloads' checks.
    const deployedPorts = async () =>
      (await s.t.db.selectFrom('composeStacks').select('deployedHostPorts').where('id', '=', stack.composeId).executeTakeFirstOrThrow()).deployedHostPorts;
    await waitFor(async () => (await deployedPorts()) !== null, { timeoutMs: 30_000, intervalMs: 250, what: `the ports ${stack.appName} published to be reported` });
    expect(listPorts(JSON.parse((await deployedPorts())!)).sort()).toEqual([`${webPort}/tcp`, `${cachePort}/tcp`].sort());
    await serves(webPort, 'first page');
    await serves(webPort, 'first page', '/first.txt');
    await redisAnswers(cachePort, 'greeting', null);
    await setKey(cachePort, 'greeting', 'kept across deploys');
    // A wrong password is refused.
    expect((await redis(cachePort, [['AUTH', 'wrong'], ['GET', 'greeting']]))?.[1]).toMatch(/^-NOAUTH/);
    const volume = `${stack.appName}_data`;
    expect(await volumeExists(volume)).toBe(true);
    const keptFile = join(s.agentDir, 'compose', stack.appName, 'files', 'kept', 'first');
    expect(readFileSync(keptFile, 'utf8').trim()).toBe('first page');
    const cacheBefore = await containersOf(stack.appName, 'cache');
    expect(cacheBefore).toHaveLength(1);

    // Redeploy with a new page (and a changed Redis service): new containers, the same data.
    await ok('compose.update', { composeId: stack.composeId, composeFile: file('second page', 2) });
    await deployAndWait(stack, 'compose.redeploy');
    await serves(webPort, 'second page');
    await serves(webPort, 'first page', '/first.txt');
    await redisAnswers(cachePort, 'greeting', 'kept across deploys');
    const cacheAfter = await containersOf(stack.appName, 'cache');
    expect(cacheAfter).toHaveLength(1);
    expect(cacheAfter[0]).not.toBe(cacheBefore[0]);
    const deployments = (await ok('deployment.allByCompose', { composeId: stack.composeId })) as { status: string; title: string | null }[];
    expect(deployments.map((d) => d.status)).toEqual(['done', 'done']);
    expect(deployments[0]?.title).toBe('Redeploy');

    // Stop: idle, nothing answers; start: done, both answer again with their data.
    await ok('compose.stop', { composeId: stack.composeId });
    await settle(stack, 'idle', 'the stop');
    await nothingAnswers(webPort, cachePort);
    await ok('compose.start', { composeId: stack.composeId });
    await settle(stack, 'done', 'the start');
    await serves(webPort, 'second page');
    await redisAnswers(cachePort, 'greeting', 'kept across deploys');

    // Delete without deleteVolumes: the containers go, the named volume and the bind-mounted files stay.
    await deleteAndWait(stack, false);
    expect(await containersOf(stack.appName, 'web')).toEqual([]);
    expect(await containersOf(stack.appName, 'cache')).toEqual([]);
    expect(await get(webPort)).toBeNull();
    expect(await volumeExists(volume)).toBe(true);
    expect(existsSync(keptFile)).toBe(true);
    expect((await docker(['volume', 'rm', volume])).ok).toBe(true);
  }, 300_000);

  it('runs the same services as a Swarm stack: deployed, reached, stopped, started, deleted with its volume', async () => {
    const [webPort, cachePort] = [await freePort(), await freePort()];
    const stack = await createStack('swarm', 'stack', webAndRedis({ page: 'swarm page', webPort, cachePort, swarm: true }));

    const log = await deployAndWait(stack);
    expect(log).toContain('docker stack');
    await serves(webPort, 'swarm page');
    await redisAnswers(cachePort, 'greeting', null);
    await setKey(cachePort, 'greeting', 'from the swarm');
    const services = (await docker(['stack', 'services', stack.appName, '--format', '{{.Name}}'])).out.split(/\s+/).filter(Boolean).sort();
    expect(services).toEqual([`${stack.appName}_cache`, `${stack.appName}_web`]);
    const volume = `${stack.appName}_data`;
    expect(await volumeExists(volume)).toBe(true);

    await ok('compose.stop', { composeId: stack.composeId });
    await settle(stack, 'idle', 'the stop');
    await nothingAnswers(webPort, cachePort);
    await ok('compose.start', { composeId: stack.composeId });
    await settle(stack, 'done', 'the start');
    await serves(webPort, 'swarm page');
    await redisAnswers(cachePort, 'greeting', 'from the swarm');

    await deleteAndWait(stack, true);
    expect((await docker(['stack', 'services', stack.appName, '-q'])).out).toBe('');
    expect(await get(webPort)).toBeNull();
    await waitFor(async () => !(await volumeExists(volume)), { timeoutMs: 30_000, intervalMs: 250, what: `volume ${volume} to be removed` });
  }, 300_000);

  it('runs a plain, a randomized and an isolated copy of one file side by side', async () => {
    const copies = await Promise.all(
      (['plain', 'random', 'isolated'] as const).map(async (kind) => {
        const [webPort, cachePort] = [await freePort(), await freePort()];
        const stack = await createStack(`side-${kind}`, 'container-compose', webAndRedis({ page: `${kind} page`, webPort, cachePort }));
        return { kind, webPort, cachePort, ...stack };
      }),
    );
    const [plain, random, isolated] = copies as [(typeof copies)[0], (typeof copies)[0], (typeof copies)[0]];

    const randomized = await ok('compose.randomizeCompose', { composeId: random.composeId });
    const suffix = randomized.suffix as string;
    expect(suffix).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(randomized.composeFile).toContain(`web-${suffix}:`);
    expect(randomized.composeFile).toContain(`cache-${suffix}:`);
    expect(randomized.composeFile).toContain(`data-${suffix}:/data`);
    expect(randomized.isolatedNetwork).toBeNull();
    const isolatedFile = await ok('compose.isolatedDeployment', { composeId: isolated.composeId });
    expect(isolatedFile.isolatedNetwork).toBe(isolated.appName);
    expect(isolatedFile.composeFile).toContain(`${isolated.appName}:`);
    expect(isolatedFile.composeFile).toMatch(/external: true/);
    // What compose.getConvertedCompose shows is what the two calls answered; the plain file is unchanged.
    expect(await ok('compose.getConvertedCompose', { composeId: random.composeId })).toEqual(randomized);
    expect(await ok('compose.getConvertedCompose', { composeId: isolated.composeId })).toEqual(isolatedFile);
    const plainFile = await ok('compose.getConvertedCompose', { composeId: plain.composeId });
    expect(plainFile).toMatchObject({ suffix: null, isolatedNetwork: null });
    expect(plainFile.composeFile).not.toContain(suffix);

    for (const copy of copies) await deployAndWait(copy);
    for (const copy of copies) {
      await serves(copy.webPort, `${copy.kind} page`);
      await redisAnswers(copy.cachePort, 'owner', null);
      await setKey(copy.cachePort, 'owner', copy.kind);
    }
    // Each Redis has its own volume: each keeps its own value.
    for (const copy of copies) await redisAnswers(copy.cachePort, 'owner', copy.kind);

    // The randomized services and volume carry the suffix; the isolated stack has its own network.
    expect(await containersOf(random.appName, `web-${suffix}`)).toHaveLength(1);
    expect(await containersOf(random.appName, `cache-${suffix}`)).toHaveLength(1);
    expect(await containersOf(plain.appName, 'web')).toHaveLength(1);
    expect(await containersOf(isolated.appName, 'web')).toHaveLength(1);
    const volumes = [`${plain.appName}_data`, `${random.appName}_data-${suffix}`, `${isolated.appName}_data`];
    for (const volume of volumes) expect(await volumeExists(volume), volume).toBe(true);
    const network = await docker(['network', 'inspect', isolated.appName, '--format', '{{json .}}']);
    expect(network.ok, `network ${isolated.appName}`).toBe(true);
    const attached = Object.values((JSON.parse(network.out) as { Containers?: Record<string, { Name: string }> }).Containers ?? {}).map((c) => c.Name);
    const webName = async (copy: Stack, service: string) => {
      const [id] = await containersOf(copy.appName, service);
      return (await docker(['inspect', id!, '--format', '{{.Name}}'])).out.replace(/^\//, '');
    };
    expect(attached).toContain(await webName(isolated, 'web'));
    expect(attached).not.toContain(await webName(plain, 'web'));
    expect(attached).not.toContain(await webName(random, `web-${suffix}`));

    for (const copy of copies) await deleteAndWait(copy, true);
    for (const volume of volumes) expect(await volumeExists(volume), volume).toBe(false);
    expect((await docker(['network', 'inspect', isolated.appName])).ok).toBe(false);
  }, 300_000);

  it('routes a domain to a service of a randomized stack through the reverse proxy', async () => {
    const stack = await createStack('site', 'container-compose', webAndRedis({ page: 'compose through the proxy' }));
    await ok('compose.update', { composeId: stack.composeId, randomize: true, suffix: 'e2e' });
    const host = `site-${s.run}.skiff.test`;
    await ok('domain.create', {
      host,
      path: '/',
      port: 8080,
      https: false,
      composeId: stack.composeId,
      serviceName: 'web',
      certificateType: 'none',
      domainType: 'compose',
    });
    const converted = await ok('compose.getConvertedCompose', { composeId: stack.composeId });
    expect(converted.routedServices).toEqual(['web-e2e']);
    expect(converted.composeFile).toContain(`web-e2e.${stack.appName}`);

    await deployAndWait(stack);
    await waitFor(proxyAnswers({ port: s.proxy.httpPort, host }, 200, 'compose through the proxy'), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `${host} to answer through the proxy (agent output: ${agentTail()})`,
    });
    await deleteAndWait(stack, true);
    await waitFor(proxyAnswers({ port: s.proxy.httpPort, host }, 404), { timeoutMs: 30_000, intervalMs: 250, what: `${host} to stop being routed` });
  }, 300_000);
});
