// A host port belongs to one workload of a server, whatever its organization: Swarm would start
// a second publisher's waiting task as soon as the first one stops, and hand it the port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { Command, CommandStatus, type PublishedHostPorts, timestampFromDate } from '@skiff/proto';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { platformHostPorts } from './published-ports.js';

let t: TestPlatform;
let other: string;
const ports = (port: number, protocol?: string) => ({ Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host', ...(protocol ? { Protocol: protocol } : {}) }] });

async function environmentOf(key?: string) {
  return (await t.call('project.create', { name: 'ports' }, { key })).body.environments[0].environmentId as string;
}

beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite' });
  const org = (await t.call('organization.create', { name: 'other tenant' })).body;
  other = (await t.call('user.createApiKey', { name: 'other', metadata: { organizationId: org.organizationId } })).body.key;
});
afterAll(() => t?.close());

describe('a published host port', () => {
  it('is refused to every other workload of the server, of any organization, and changes nothing', async () => {
    const mine = (await t.call('application.create', { name: 'web', appName: 'web', environmentId: await environmentOf() })).body.applicationId;
    expect((await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(28081) })).status).toBe(200);

    const env = await environmentOf(other);
    const theirs = (await t.call('application.create', { name: 'evil', appName: 'evil', environmentId: env }, { key: other })).body.applicationId;
    const app = await t.call('application.update', { applicationId: theirs, endpointSpecCluster: ports(28081) }, { key: other });
    expect(app.status).toBe(400);
    expect(app.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28081 is already published on this server' }]);
    expect((await t.call('application.one', { applicationId: theirs }, { key: other })).body.endpointSpecCluster).toBeNull();

    const cacheId = (await t.call('cache.create', { name: 'c', appName: 'evil-cache', databasePassword: 'correct-horse-battery', environmentId: env }, { key: other })).body.cacheId;
    const cache = await t.call('cache.saveExternalPort', { cacheId, externalPort: 28081 }, { key: other });
    expect(cache.body.issues).toEqual([{ path: ['externalPort'], message: 'port 28081 is already published on this server' }]);
    const cacheSpec = await t.call('cache.update', { cacheId, endpointSpecCluster: ports(28081) }, { key: other });
    expect(cacheSpec.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28081 is already published on this server' }]);

    const dbAId = (await t.call('dbA.create', { name: 'd', appName: 'evil-db', environmentId: env }, { key: other })).body.dbAId;
    expect((await t.call('dbA.saveExternalPort', { dbAId, externalPort: 16543 }, { key: other })).status).toBe(200);
    // …and the other way round: an application cannot take a database's port.
    const taken = await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(16543) });
    expect(taken.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 16543 is already published on this server' }]);
  });

  it('stays its own workload\'s to publish again, and another protocol\'s port of that number is free', async () => {
    const env = await environmentOf();
    const app = (await t.call('application.create', { name: 'dns', appName: 'dns', environmentId: env })).body.applicationId;
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28053) })).status).toBe(200);
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28053) })).status).toBe(200);
    const udp = (await t.call('application.create', { name: 'dns-udp', appName: 'dns-udp', environmentId: env })).body.applicationId;
    expect((await t.call('application.update', { applicationId: udp, endpointSpecCluster: ports(28053, 'udp') })).status).toBe(200);
  });

  it("is refused when it is one Skiff publishes itself (the proxy's, the cluster registry's), naming it", async () => {
    const env = await environmentOf(other);
    const app = (await t.call('application.create', { name: 'grab', appName: 'grab', environmentId: env }, { key: other })).body.applicationId;
    for (const [port, protocol, what] of [
      [80, undefined, "port 80 is reserved for Skiff's proxy (HTTP)"],
      [443, undefined, "port 443 is reserved for Skiff's proxy (HTTPS)"],
      [443, 'udp', "port 443/udp is reserved for Skiff's proxy (HTTP/3)"],
      [5030, undefined, "port 5030 is reserved for Skiff's cluster registry"],
    ] as const) {
      const res = await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(port, protocol) }, { key: other });
      expect(res.body.issues, `${port}/${protocol}`).toEqual([{ path: ['endpointSpecCluster'], message: what }]);
    }
    expect((await t.call('application.one', { applicationId: app }, { key: other })).body.endpointSpecCluster).toBeNull();
    const cacheId = (await t.call('cache.create', { name: 'c', appName: 'grab-cache', databasePassword: 'correct-horse-battery', environmentId: env }, { key: other })).body.cacheId;
    const cache = await t.call('cache.saveExternalPort', { cacheId, externalPort: 443 }, { key: other });
    expect(cache.body.issues).toEqual([{ path: ['externalPort'], message: "port 443 is reserved for Skiff's proxy (HTTPS)" }]);
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(8443) }, { key: other })).status).toBe(200);
  });
});

describe("a compose stack's published ports", () => {
  const stackFile = (ports: string) => `services:\n  web:\n    image: busybox:latest\n    ports:\n${ports}`;

  it('follow the same rules at save (short and long syntax, ranges, protocols, host IPs), naming composeFile and changing nothing', async () => {
    const mine = (await t.call('application.create', { name: 'owner', appName: 'port-owner', environmentId: await environmentOf() })).body.applicationId;
    expect((await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(28181) })).status).toBe(200);
    const env = await environmentOf(other);
    const stack = (await t.call('compose.create', { name: 'grabber', environmentId: env }, { key: other })).body.composeId;
    for (const [lines, message] of [
      ['      - "80:8080"\n', "port 80 is reserved for Skiff's proxy (HTTP)"],
      ['      - "127.0.0.1:443:8443/udp"\n', "port 443/udp is reserved for Skiff's proxy (HTTP/3)"],
      ['      - target: 80\n        published: "5031"\n', "port 5031 is reserved for Skiff's cluster registry mirror"],
      ['      - "28180-28182:8080-8082"\n', 'port 28181 is already published on this server'],
      ['      - "[::1]:28181:80"\n', 'port 28181 is already published on this server'],
    ] as const) {
      const res = await t.call('compose.update', { composeId: stack, composeFile: stackFile(lines) }, { key: other });
      expect(res.body.issues, lines).toEqual([{ path: ['composeFile'], message }]);
    }
    expect((await t.call('compose.one', { composeId: stack }, { key: other })).body.composeFile).toBe('');
    const created = await t.call('compose.create', { name: 'grab2', environmentId: env, composeFile: stackFile('      - 28181:80\n') }, { key: other });
    expect(created.body.issues).toEqual([{ path: ['composeFile'], message: 'port 28181 is already published on this server' }]);
    // Another protocol's port of that number is free, and so is a port the engine picks.
    expect((await t.call('compose.update', { composeId: stack, composeFile: stackFile('      - "28181:80/udp"\n      - "28190:80"\n      - "8080"\n') }, { key: other })).status).toBe(200);
  });

  it('are taken for other workloads, and checked again at deploy', async () => {
    const env = await environmentOf(other);
    const stack = (await t.call('compose.create', { name: 'holder', environmentId: env, composeFile: stackFile('      - "28290-28291:80"\n') }, { key: other })).body.composeId;
    const app = (await t.call('application.create', { name: 'late', appName: 'late', environmentId: await environmentOf() })).body.applicationId;
    const res = await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28291) });
    expect(res.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28291 is already published on this server' }]);
    const cache = (await t.call('cache.create', { name: 'c', appName: 'late-cache', databasePassword: 'correct-horse-battery', environmentId: await environmentOf() })).body.cacheId;
    expect((await t.call('cache.saveExternalPort', { cacheId: cache, externalPort: 28290 })).body.issues).toEqual([{ path: ['externalPort'], message: 'port 28290 is already published on this server' }]);
    // A file saved before the check (written straight to the table) is refused when deployed.
    const old = (await t.call('compose.create', { name: 'old', environmentId: env }, { key: other })).body.composeId;
    await t.db.updateTable('composeStacks').set({ composeFile: stackFile('      - "28291:80"\n') }).where('id', '=', old).execute();
    const deploy = await t.call('compose.deploy', { composeId: old }, { key: other });
    expect(deploy.body.issues).toEqual([{ path: ['composeFile'], message: 'port 28291 is already published on this server' }]);
    expect(stack).toMatch(/^cmp_/);
  });
});

describe("a compose stack's published ports: interpolations, git sources and the cap", () => {
  const stackFile = (ports: string) => `services:\n  web:\n    image: busybox:latest\n    ports:\n${ports}`;
  const taken = (port: number) => [{ path: ['composeFile'], message: `port ${port} is already published on this server` }];

  it("resolves a `${PORT}` with the stack's own variables at save, whether the file or the variables change, and takes it for others", async () => {
    const mine = (await t.call('application.create', { name: 'holder', appName: 'var-holder', environmentId: await environmentOf() })).body.applicationId;
    expect((await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(28381) })).status).toBe(200);
    const stack = (await t.call('compose.create', { name: 'vars', environmentId: await environmentOf(other) }, { key: other })).body.composeId;
    const file = stackFile('      - "${WEB_PORT}:80"\n');
    const both = await t.call('compose.update', { composeId: stack, composeFile: file, env: 'WEB_PORT=28381\n' }, { key: other });
    expect(both.body.issues).toEqual(taken(28381));
    expect((await t.call('compose.update', { composeId: stack, composeFile: file, env: 'WEB_PORT=28382\n' }, { key: other })).status).toBe(200);
    // The variables alone move the port: refused, and the stored ones stay.
    const moved = await t.call('compose.update', { composeId: stack, env: 'WEB_PORT=28381\n' }, { key: other });
    expect(moved.body.issues).toEqual(taken(28381));
    expect((await t.call('compose.one', { composeId: stack }, { key: other })).body.env).toBe('WEB_PORT=28382\n');
    // …and the port its variable names is taken for other workloads.
    const late = await t.call('application.update', { applicationId: mine, endpointSpecCluster: ports(28382) });
    expect(late.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28382 is already published on this server' }]);
  });

  it("resolves at deploy a `${PORT}` its own variables leave open, with the environment's variables the deploy passes", async () => {
    const projectEnv = await environmentOf(other);
    const stack = (await t.call('compose.create', { name: 'env-port', environmentId: projectEnv, composeFile: stackFile('      - "${ENV_PORT}:80"\n') }, { key: other })).body.composeId;
    expect((await t.call('environment.update', { environmentId: projectEnv, env: 'ENV_PORT=28381\n' }, { key: other })).status).toBe(200);
    const deploy = await t.call('compose.deploy', { composeId: stack }, { key: other });
    expect(deploy.status).toBe(400);
    expect(deploy.body.issues).toEqual(taken(28381));
    expect(await t.db.selectFrom('deployments').select('id').where('composeId', '=', stack).execute()).toEqual([]);
  });

  it('refuses a file publishing more host ports than a stack may (100 by default), naming composeFile, and stores nothing', async () => {
    const env = await environmentOf(other);
    const created = await t.call('compose.create', { name: 'all', environmentId: env, composeFile: stackFile('      - "1-65535:1-65535"\n') }, { key: other });
    expect(created.status).toBe(400);
    expect(created.body.issues).toEqual([{ path: ['composeFile'], message: 'publishes 65535 host ports, more than the 100 a stack may publish' }]);
    const stack = (await t.call('compose.create', { name: 'many', environmentId: env }, { key: other })).body.composeId;
    const res = await t.call('compose.update', { composeId: stack, composeFile: stackFile('      - "30000-30100:30000-30100"\n') }, { key: other });
    expect(res.body.issues).toEqual([{ path: ['composeFile'], message: 'publishes 101 host ports, more than the 100 a stack may publish' }]);
    expect((await t.call('compose.one', { composeId: stack }, { key: other })).body.composeFile).toBe('');
    expect((await t.call('compose.update', { composeId: stack, composeFile: stackFile('      - "30000-30099:30000-30099"\n') }, { key: other })).status).toBe(200);
  });

  it('refuses a published value Compose reads as a port that is not written as one, or another protocol, naming composeFile and the service, and stores nothing', async () => {
    const env = await environmentOf(other);
    const stack = (await t.call('compose.create', { name: 'odd', environmentId: env }, { key: other })).body.composeId;
    const notAPort = (value: string) => [{ path: ['composeFile'], message: `web: ${value}: a published port must be a port or a range of ports of 1 to 65535, written in decimal, of tcp, udp or sctp` }];
    for (const [lines, value] of [
      ['      - "+28081:8080"\n', '+28081'],
      ['      - "028081:8080"\n', '028081'],
      ['      - target: 8080\n        published: "0x6DB1"\n', '0x6DB1'],
      ['      - target: 8080\n        published: "0o66661"\n', '0o66661'],
      ['      - target: 8080\n        published: "+28081"\n', '+28081'],
      ['      - target: 8080\n        published: "28_081"\n', '28_081'],
      ['      - "476541:8080"\n', '476541'],
      ['      - "28081:8080/quic"\n', '28081/quic'],
    ] as const) {
      const res = await t.call('compose.update', { composeId: stack, composeFile: stackFile(lines) }, { key: other });
      expect(res.body.issues, lines).toEqual(notAPort(value));
    }
    // Its variable read as one, at save.
    const variable = await t.call('compose.update', { composeId: stack, composeFile: stackFile('      - "${P}:8080"\n'), env: 'P=+28081\n' }, { key: other });
    expect(variable.body.issues).toEqual(notAPort('${P}'));
    const created = await t.call('compose.create', { name: 'odd2', environmentId: env, composeFile: stackFile('      - "+28081:8080"\n') }, { key: other });
    expect(created.body.issues).toEqual(notAPort('+28081'));
    expect((await t.call('compose.one', { composeId: stack }, { key: other })).body).toMatchObject({ composeFile: '', env: '' });
  });

  it('counts the ports of wide ranges repeated through aliases once each, without listing them first', async () => {
    const ranges = Array.from({ length: 8 }, (_, i) => `"30000-39999:${30000 + i}-${39999 + i}"`).join(', ');
    const services = Array.from({ length: 500 }, (_, i) => `  s${i}:\n    image: busybox:latest\n    ports: *p\n`).join('');
    const created = await t.call('compose.create', { name: 'aliases', environmentId: await environmentOf(other), composeFile: `x-ports: &p [${ranges}]\nservices:\n${services}` }, { key: other });
    expect(created.body.issues).toEqual([{ path: ['composeFile'], message: 'publishes 10000 host ports, more than the 100 a stack may publish' }]);
  });

  it("sends a git source's deploy the ports the stack may not publish (reserved, other workloads', resolved ones too) and the cap, for the agent to check", async () => {
    const env = await environmentOf();
    const holder = (await t.call('compose.create', { name: 'var-port', environmentId: env, composeFile: stackFile('      - "${HELD}:80"\n') })).body.composeId;
    expect((await t.call('compose.update', { composeId: holder, env: 'HELD=28481\n' })).status).toBe(200);
    // A stack saved before the cap (written straight to the table) stays one range in the command.
    const legacy = (await t.call('compose.create', { name: 'legacy', environmentId: env })).body.composeId;
    await t.db.updateTable('composeStacks').set({ composeFile: stackFile('      - "40000-49999:40000-49999"\n') }).where('id', '=', legacy).execute();
    const composeId = (await t.call('compose.create', { name: 'from git', environmentId: env, sourceType: 'git' })).body.composeId;
    expect((await t.call('compose.update', { composeId, customGitUrl: 'https://git.example.com/acme/stack.git', customGitBranch: 'main' })).status).toBe(200);
    const deploy = await t.call('compose.deploy', { composeId });
    expect(deploy.status, JSON.stringify(deploy.body)).toBe(200);
    const row = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${composeId}`).executeTakeFirstOrThrow();
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    const value = command.payload?.$case === 'deployCompose' ? command.payload.value : null;
    expect(value?.maxHostPorts).toBe(100);
    // Ranges of one protocol and reason; a taken port's reason is empty (the agent says "already published on this server").
    const covering = (port: number, protocol = 'tcp') => value?.forbiddenHostPorts.find((f) => f.protocol === protocol && f.first <= port && port <= f.last);
    expect(covering(80)).toEqual({ first: 80, last: 80, protocol: 'tcp', reason: "reserved for Skiff's proxy (HTTP)" });
    expect(covering(443, 'udp')?.reason).toBe("reserved for Skiff's proxy (HTTP/3)");
    expect(covering(28481)?.reason).toBe('');
    expect(covering(28381)?.reason).toBe('');
    expect(covering(28482)).toBeUndefined();
    expect(covering(45000)).toEqual({ first: 40000, last: 49999, protocol: 'tcp', reason: '' });
  });
});

// A git source's file is read by its agent only: the ports it published when deployed come
// back in the deploy's result, and are the stack's from then on.
describe("a compose stack's ports as its agent deployed them", () => {
  const stackFile = (ports: string) => `services:\n  web:\n    image: busybox:latest\n    ports:\n${ports}`;
  const taken = (port: number | string, field = 'composeFile') => [{ path: [field], message: `port ${port} is already published on this server` }];
  const deployCommand = async (composeId: string, key?: string) => {
    const deploy = await t.call('compose.deploy', { composeId }, { key });
    expect(deploy.status, JSON.stringify(deploy.body)).toBe(200);
    const rows = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${composeId}`).execute();
    const row = rows.sort((a, b) => Number(a.position) - Number(b.position)).at(-1)!;
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    return { commandId: row.id, forbidden: command.payload?.$case === 'deployCompose' ? command.payload.value.forbiddenHostPorts : [] };
  };
  const result = (commandId: string, publishedHostPorts?: PublishedHostPorts, status = CommandStatus.COMMAND_STATUS_SUCCEEDED) =>
    new DeploymentReports({ db: t.db, clock: () => new Date() }).applyCommandResult('local', { commandId, status, reason: status === CommandStatus.COMMAND_STATUS_SUCCEEDED ? '' : 'failed', finishedAt: timestampFromDate(new Date()), publishedHostPorts });
  const gitStack = async (name: string, key?: string) => {
    const composeId = (await t.call('compose.create', { name, environmentId: await environmentOf(key), sourceType: 'git' }, { key })).body.composeId as string;
    expect((await t.call('compose.update', { composeId, customGitUrl: 'https://git.example.com/acme/stack.git', customGitBranch: 'main' }, { key })).status).toBe(200);
    return composeId;
  };

  it('are refused to every other workload of the server at save and deploy, sent to other git stacks, and stay its own to publish again', async () => {
    const git = await gitStack('deployed-git', other);
    const first = await deployCommand(git, other);
    expect(await result(first.commandId, { ranges: [{ first: 28591, last: 28592, protocol: 'tcp' }, { first: 28593, last: 28593, protocol: 'udp' }] })).toBe('applied');

    const env = await environmentOf();
    const raw = await t.call('compose.create', { name: 'late-raw', environmentId: env, composeFile: stackFile('      - "28592:80"\n') });
    expect(raw.body.issues).toEqual(taken(28592));
    const app = (await t.call('application.create', { name: 'late-app', appName: 'late-app', environmentId: env })).body.applicationId;
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28591) })).body.issues).toEqual(taken(28591, 'endpointSpecCluster'));
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28593, 'udp') })).body.issues).toEqual(taken('28593/udp', 'endpointSpecCluster'));
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28593) })).status).toBe(200);
    // A raw file saved before (written straight to the table) is refused when deployed.
    const old = (await t.call('compose.create', { name: 'old-raw', environmentId: env })).body.composeId;
    await t.db.updateTable('composeStacks').set({ composeFile: stackFile('      - "28591:80"\n') }).where('id', '=', old).execute();
    expect((await t.call('compose.deploy', { composeId: old })).body.issues).toEqual(taken(28591));
    // Another git stack's agent is told; the stack's own deploy is not.
    const covering = (forbidden: { first: number; last: number; protocol: string }[], port: number) => forbidden.find((f) => f.protocol === 'tcp' && f.first <= port && port <= f.last);
    expect(covering((await deployCommand(await gitStack('second-git'))).forbidden, 28592)).toMatchObject({ reason: '' });
    const again = await deployCommand(git, other);
    expect(covering(again.forbidden, 28592)).toBeUndefined();

    // Its next deploy's ports replace them (entries that are not ports ignored).
    expect(await result(again.commandId, { ranges: [{ first: 0, last: 5, protocol: 'tcp' }, { first: 28595, last: 28595, protocol: 'quic' }, { first: 28594, last: 28594, protocol: 'tcp' }] }, CommandStatus.COMMAND_STATUS_FAILED)).toBe('applied');
    expect((await t.call('compose.update', { composeId: old, composeFile: stackFile('      - "28591:80"\n') })).status).toBe(200);
    expect((await t.call('compose.update', { composeId: old, composeFile: stackFile('      - "28594:80"\n') })).body.issues).toEqual(taken(28594));
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(5, 'tcp') })).status).toBe(200);
    // A deploy that ended before its file was in place (no ports reported) leaves them as they were.
    expect(await result((await deployCommand(git, other)).commandId, undefined, CommandStatus.COMMAND_STATUS_FAILED)).toBe('applied');
    expect((await t.call('compose.update', { composeId: old, composeFile: stackFile('      - "28594:80"\n') })).body.issues).toEqual(taken(28594));
    // A copy of its environment has not been deployed: the ports stay the original's alone.
    const gitEnv = (await t.call('compose.one', { composeId: git }, { key: other })).body.environmentId;
    expect((await t.call('environment.duplicate', { environmentId: gitEnv, name: 'copy' }, { key: other })).status).toBe(200);
    expect(covering((await deployCommand(git, other)).forbidden, 28594)).toBeUndefined();
    // Never part of the stack's answer.
    expect((await t.call('compose.one', { composeId: git }, { key: other })).body).not.toHaveProperty('deployedHostPorts');
  });

  it("keeps the newest deploy's ports when an older deploy's result comes after it", async () => {
    const git = await gitStack('late-result-git', other);
    const older = await deployCommand(git, other);
    const newer = await deployCommand(git, other);
    expect(await result(newer.commandId, { ranges: [{ first: 28601, last: 28601, protocol: 'tcp' }] })).toBe('applied');
    expect(await result(older.commandId, { ranges: [{ first: 28602, last: 28602, protocol: 'tcp' }] })).toBe('applied');
    const stored = await t.db.selectFrom('composeStacks').select('deployedHostPorts').where('id', '=', git).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.deployedHostPorts!)).toEqual([{ first: 28601, last: 28601, protocol: 'tcp' }]);
  });

  it('keep no more ports than a stack may publish, whatever an agent reports (every check would list them one by one)', async () => {
    const git = await gitStack('boasting-git', other);
    const whole = Array.from({ length: 1000 }, (_, i) => ({ first: 1, last: 65535, protocol: i % 2 ? 'udp' : 'tcp' }));
    expect(await result((await deployCommand(git, other)).commandId, { ranges: whole })).toBe('applied');
    const stored = await t.db.selectFrom('composeStacks').select('deployedHostPorts').where('id', '=', git).executeTakeFirstOrThrow();
    // Cleared before any check of the server could list them.
    await t.db.updateTable('composeStacks').set({ deployedHostPorts: null }).where('id', '=', git).execute();
    const kept = JSON.parse(stored.deployedHostPorts!) as { first: number; last: number; protocol: string }[];
    expect(kept.reduce((n, r) => n + r.last - r.first + 1, 0)).toBe(100);
    expect(kept[0]).toEqual({ first: 1, last: 100, protocol: 'tcp' });
  });
});

describe("a copy of an application, cache or database", () => {
  it("keeps its endpoint spec but not the host ports its original publishes, so the original's redeploy and the copy's both work", async () => {
    const env = await environmentOf(other);
    const spec = { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: 28791, PublishMode: 'host' }, { TargetPort: 9090, PublishMode: 'host' }] };
    const app = (await t.call('application.create', { name: 'orig', appName: 'orig', environmentId: env }, { key: other })).body.applicationId;
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: spec }, { key: other })).status).toBe(200);
    const cache = (await t.call('cache.create', { name: 'orig-cache', appName: 'orig-cache', databasePassword: 'pw-for-the-copy-test', environmentId: env }, { key: other })).body.cacheId;
    // No operation sets a cache's endpoint spec; a row may hold one (written before, or by hand).
    await t.db.updateTable('cacheInstances').set({ endpointSpecCluster: JSON.stringify({ Ports: [{ TargetPort: 6379, PublishedPort: 28792, PublishMode: 'host' }] }) }).where('id', '=', cache).execute();
    const copy = await t.call('environment.duplicate', { environmentId: env, name: 'copy' }, { key: other });
    expect(copy.status).toBe(200);
    const copied = (id: string) => (copy.body.services as { id: string; name: string }[]).find((s) => s.name === id)!.id;
    const copiedApp = copied('orig');
    expect((await t.call('application.one', { applicationId: copiedApp }, { key: other })).body.endpointSpecCluster).toEqual({ Mode: 'dnsrr', Ports: [{ TargetPort: 9090, PublishMode: 'host' }] });
    expect((await t.call('cache.one', { cacheId: copied('orig-cache') }, { key: other })).body.endpointSpecCluster).toEqual({ Ports: [] });
    // The ports stay the originals': still refused to others, and the originals may save them again.
    expect((await t.call('application.update', { applicationId: copiedApp, endpointSpecCluster: spec }, { key: other })).body.issues).toEqual([{ path: ['endpointSpecCluster'], message: 'port 28791 is already published on this server' }]);
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: spec }, { key: other })).status).toBe(200);
  });
});

describe("a compose stack's raw file kept while its source was git", () => {
  it('is checked again when the stack becomes raw, naming composeFile and changing nothing', async () => {
    const env = await environmentOf(other);
    const file = 'services:\n  web:\n    image: busybox:latest\n    ports:\n      - "28691:80"\n';
    const stack = (await t.call('compose.create', { name: 'switching', environmentId: env, composeFile: file }, { key: other })).body.composeId;
    expect((await t.call('compose.update', { composeId: stack, sourceType: 'git' }, { key: other })).status).toBe(200);
    // While it is git, the file's port is not the stack's: another workload takes it.
    const app = (await t.call('application.create', { name: 'taker', appName: 'taker', environmentId: await environmentOf() })).body.applicationId;
    expect((await t.call('application.update', { applicationId: app, endpointSpecCluster: ports(28691) })).status).toBe(200);
    const back = await t.call('compose.update', { composeId: stack, sourceType: 'raw' }, { key: other });
    expect(back.body.issues).toEqual([{ path: ['composeFile'], message: 'port 28691 is already published on this server' }]);
    expect((await t.call('compose.one', { composeId: stack }, { key: other })).body.sourceType).toBe('git');
  });
});

describe('SKIFF_MAX_COMPOSE_PORTS', () => {
  it("sets the cap of a stack's host ports, at save and in the deploy's command", async () => {
    const capped = await startTestPlatform({ database: 'pglite', maxComposePorts: 2 });
    try {
      const env = (await capped.call('project.create', { name: 'p' })).body.environments[0].environmentId;
      const file = (ports: string) => `services:\n  a:\n    image: x\n    ports: [${ports}]\n`;
      const refused = await capped.call('compose.create', { name: 's', environmentId: env, composeFile: file('"8000-8002:80"') });
      expect(refused.body.issues).toEqual([{ path: ['composeFile'], message: 'publishes 3 host ports, more than the 2 a stack may publish' }]);
      // A port counts once however many services publish it (its protocols apart).
      const composeId = (await capped.call('compose.create', { name: 's', environmentId: env, composeFile: file('"8000:80", "8000:80/udp"') })).body.composeId;
      expect((await capped.call('compose.deploy', { composeId })).status).toBe(200);
      const row = await capped.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${composeId}`).executeTakeFirstOrThrow();
      const command = Command.decode(new CommandOutbox(capped.platform.secrets).open(row.payload));
      expect(command.payload?.$case === 'deployCompose' && command.payload.value.maxHostPorts).toBe(2);
    } finally {
      await capped.close();
    }
  });
});

describe("the control plane's own ports", () => {
  it('are refused to workloads of the platform host', async () => {
    const own = await startTestPlatform({ database: 'pglite', platformPorts: platformHostPorts({ port: 3000, grpcPort: 50051, natsUrl: 'nats://127.0.0.1:4222' }) });
    try {
      const env = (await own.call('project.create', { name: 'p' })).body.environments[0].environmentId;
      const app = (await own.call('application.create', { name: 'a', appName: 'a', environmentId: env })).body.applicationId;
      for (const [port, what] of [[3000, 'API (SKIFF_PORT)'], [50051, 'agent reports (SKIFF_GRPC_PORT)'], [4222, 'NATS (SKIFF_NATS_URL)'], [2020, 'proxy dashboard']] as const) {
        const res = await own.call('application.update', { applicationId: app, endpointSpecCluster: ports(port) });
        expect(res.body.issues).toEqual([{ path: ['endpointSpecCluster'], message: `port ${port} is reserved for Skiff's ${what}` }]);
      }
      const stack = await own.call('compose.create', { name: 's', environmentId: env, composeFile: 'services:\n  a:\n    image: x\n    ports: ["3000:80"]\n' });
      expect(stack.body.issues).toEqual([{ path: ['composeFile'], message: "port 3000 is reserved for Skiff's API (SKIFF_PORT)" }]);
    } finally {
      await own.close();
    }
  });
});

// The check and the write are one step per server (a lock held until the write commits), on
// PostgreSQL and on the embedded PGlite alike.
describe.each(['postgres', 'pglite'] as const)('saves racing for one host port (%s)', (database) => {
  let r: TestPlatform;
  let rival: string;
  beforeAll(async () => {
    r = await startTestPlatform({ database });
    const org = (await r.call('organization.create', { name: 'rival tenant' })).body;
    rival = (await r.call('user.createApiKey', { name: 'rival', metadata: { organizationId: org.organizationId } })).body.key;
  });
  afterAll(() => r?.close());

  const environment = async (key?: string) => (await r.call('project.create', { name: 'race' }, { key })).body.environments[0].environmentId as string;
  const app = async (appName: string, key?: string, serverId?: string) =>
    (await r.call('application.create', { name: appName, appName, environmentId: await environment(key), ...(serverId ? { serverId } : {}) }, { key })).body.applicationId as string;
  const taken = (port: number, field: string) => [{ path: [field], message: `port ${port} is already published on this server` }];

  it('lets exactly one of the applications publishing one port at once have it; the others answer BAD_REQUEST naming the field', async () => {
    const apps = [await app('race-a'), await app('race-b'), await app('race-c', rival), await app('race-d', rival)];
    const keys = [undefined, undefined, rival, rival];
    const answers = await Promise.all(apps.map((applicationId, i) => r.call('application.update', { applicationId, endpointSpecCluster: ports(29001) }, { key: keys[i] })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(400);
      expect(refused.body.issues).toEqual(taken(29001, 'endpointSpecCluster'));
    }
    const stored = await r.db.selectFrom('applications').select('endpointSpecCluster').where('id', 'in', apps).execute();
    expect(stored.filter((s) => s.endpointSpecCluster !== null)).toHaveLength(1);
  });

  it('lets exactly one workload of any kind have it: an application, a cache, a database service and a compose stack at once', async () => {
    const env = await environment(rival);
    const applicationId = await app('race-app');
    const cacheId = (await r.call('cache.create', { name: 'c', appName: 'race-cache', databasePassword: 'correct-horse-battery', environmentId: env }, { key: rival })).body.cacheId;
    const dbAId = (await r.call('dbA.create', { name: 'd', appName: 'race-db', environmentId: env }, { key: rival })).body.dbAId;
    const composeId = (await r.call('compose.create', { name: 's', environmentId: await environment() })).body.composeId;
    const answers = await Promise.all([
      r.call('application.update', { applicationId, endpointSpecCluster: ports(29002) }),
      r.call('cache.saveExternalPort', { cacheId, externalPort: 29002 }, { key: rival }),
      r.call('dbA.saveExternalPort', { dbAId, externalPort: 29002 }, { key: rival }),
      r.call('compose.update', { composeId, composeFile: 'services:\n  web:\n    image: busybox:latest\n    ports:\n      - "29002:80"\n' }),
    ]);
    expect(answers.map((a) => a.status).filter((s) => s === 200)).toHaveLength(1);
    answers.forEach((a, i) => {
      if (a.status !== 200) expect(a.body.issues).toEqual(taken(29002, ['endpointSpecCluster', 'externalPort', 'externalPort', 'composeFile'][i]!));
    });
  });

  it('lets saves of different ports, or of one port on different servers, all pass at once', async () => {
    const servers = await Promise.all(['race-one', 'race-two'].map(async (name, i) => (await r.call('server.create', { name, address: `192.0.2.${41 + i}` })).body.serverId as string));
    const onServers = [await app('race-s1', undefined, servers[0]), await app('race-s2', undefined, servers[1])];
    const onHost = [await app('race-p1'), await app('race-p2', rival)];
    const answers = await Promise.all([
      ...onServers.map((applicationId) => r.call('application.update', { applicationId, endpointSpecCluster: ports(29003) })),
      r.call('application.update', { applicationId: onHost[0], endpointSpecCluster: ports(29004) }),
      r.call('application.update', { applicationId: onHost[1], endpointSpecCluster: ports(29005) }, { key: rival }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  });
});
