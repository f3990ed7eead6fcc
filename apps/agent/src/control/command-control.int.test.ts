// Cancels and queue cleaning on the agent's real command path below NATS: the journal on
// the filesystem, the intake, the scheduler and the runner, with a handler that runs until
// its signal aborts (a long build or rollout stands for it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON } from '@skiff/domain';
import { Command, CommandKind, CommandStatus, DeploymentStatus, WorkloadKind, timestampFromDate, type CommandResult, type DeploymentEvent } from '@skiff/proto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { deployApplicationHandler } from '../handlers/deploy-application.js';
import { pause } from '../abort/abandoned.js';
import { type CommandHandler, type CommandOutcome, type CommandPhase } from '../pipeline/handler.js';
import { CommandIntake } from '../pipeline/intake.js';
import { CommandJournal } from '../pipeline/journal.js';
import { handlerRegistry, runCommand } from '../pipeline/runner.js';
import { RunningCommands } from '../pipeline/running-commands.js';
import { CommandScheduler } from '../pipeline/scheduler.js';
import { waitUntil } from '../testing/wait.js';
import type { DockerDriver } from '../docker/driver.js';
import { CommandControl } from './command-control.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const SERVER = 'srv-control';
const KEY = 'application:app1';

/** A deploy handler (or a stop one) that says it builds (or rolls out) and then waits on its signal. */
function waitingHandler(phases: Map<string, CommandPhase>, kind: 'deploy' | 'stop' = 'deploy') {
  const started: string[] = [];
  const ended: Array<{ id: string; outcome: CommandOutcome }> = [];
  const handler: CommandHandler = {
    kind: kind === 'deploy' ? CommandKind.COMMAND_KIND_DEPLOY_APPLICATION : CommandKind.COMMAND_KIND_STOP_WORKLOAD,
    payloadCase: kind === 'deploy' ? 'deployApplication' : 'stopWorkload',
    takesSlot: true,
    validate: () => null,
    async run(context) {
      started.push(context.command.commandId);
      context.setPhase?.(phases.get(context.command.commandId) ?? 'build');
      await pause(600_000, context.signal);
      return { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
    },
    async ended(command, outcome) {
      ended.push({ id: command.commandId, outcome });
    },
  };
  return { handler, started, ended };
}

function aDeploy(id: string, deploymentId = `dep-${id}`, workloadKey = KEY): Command {
  return {
    commandId: id,
    serverId: SERVER,
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey,
    deadline: timestampFromDate(new Date(Date.now() + 600_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app1', appName: 'web' },
        image: 'busybox:latest',
        env: {},
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: '{}',
      },
    },
  };
}

function aStop(id: string, workloadKey: string): Command {
  return {
    ...aDeploy(id, `dep-${id}`, workloadKey),
    kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
    payload: { $case: 'stopWorkload', value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app2', appName: 'other' } } },
  };
}

/** A Docker driver that records the methods called on it and finds nothing (no service). */
function recordingDriver() {
  const calls: string[] = [];
  const driver = new Proxy({} as DockerDriver, {
    get: (_target, name) =>
      typeof name === 'string' && name !== 'then'
        ? async () => {
            calls.push(name);
            return name === 'servicesByLabel' || name === 'serviceTasks' ? [] : undefined;
          }
        : undefined,
  });
  return { driver, calls };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * The agent's command path without NATS: intake → scheduler → runner, and its control. With
 * `driver`, deploys run the real deploy handler on it, and the waiting handler takes stops.
 */
async function harness(dir?: string, driver?: DockerDriver) {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'skiff-control-')));
  const journal = await CommandJournal.open(dataDir);
  const results: CommandResult[] = [];
  const events: DeploymentEvent[] = [];
  const reports = { reportEvent: (e: DeploymentEvent) => events.push(e), reportResult: (r: CommandResult) => results.push(r) };
  const phases = new Map<string, CommandPhase>();
  const test = waitingHandler(phases, driver ? 'stop' : 'deploy');
  const handlers = handlerRegistry(driver ? [test.handler, deployApplicationHandler({ driver, journal, reports })] : [test.handler]);
  const stop = new AbortController();
  const running = new RunningCommands();
  const scheduler = new CommandScheduler({
    maxSlots: 1,
    run: ({ id }) => runCommand(id, { journal, reports, handlers, log, signal: stop.signal, running }),
  });
  const schedule = (id: string) => {
    const entry = journal.get(id);
    return !!entry && entry.state !== 'finished' && scheduler.enqueue({ id, workloadKey: entry.workloadKey, takesSlot: true });
  };
  const intake = new CommandIntake({ serverId: SERVER, journal, reports, handlers, schedule: (e) => schedule(e.id), log });
  const control = new CommandControl({ scheduler, running, journal, reports, handlers, log });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    stop.abort();
    await scheduler.stop();
    await journal.close();
  };
  cleanups.push(async () => {
    await close();
    if (!dir) await rm(dataDir, { recursive: true, force: true });
  });
  const receive = (command: Command) => intake.receive(Command.encode(command).finish(), command.commandId);
  const resultOf = (id: string) => results.find((r) => r.commandId === id);
  const waitResult = (id: string) => waitUntil(`the result of ${id}`, () => resultOf(id), 5_000, 10);
  const waitStarted = (id: string) => waitUntil(`${id} to start`, () => test.started.includes(id), 5_000, 10);
  return { dataDir, journal, results, events, phases, test, scheduler, control, stop, schedule, receive, resultOf, waitResult, waitStarted, close };
}

describe('cancelling the running command', () => {
  it('ends it CANCELLED with the reason, lets the handler close it, and never runs it again', async () => {
    const h = await harness();
    await h.receive(aDeploy('c1'));
    await h.waitStarted('c1');

    const reply = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '' } } });
    expect(reply).toEqual({ commandIds: ['c1'], error: '' });
    const result = await h.waitResult('c1');
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(h.test.ended).toEqual([{ id: 'c1', outcome: { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON } }]);
    expect(h.journal.get('c1')?.state).toBe('finished');

    // Delivered again: not run, its result re-reported.
    expect(await h.receive(aDeploy('c1'))).toBe('duplicate');
    expect(h.results.filter((r) => r.commandId === 'c1')).toHaveLength(2);
    expect(h.test.started).toEqual(['c1']);
  });

  it('cancels only the deployment named, and only its build when asked to kill the build', async () => {
    const h = await harness();
    h.phases.set('r1', 'rollout');
    await h.receive(aDeploy('r1', 'dep-r1'));
    await h.waitStarted('r1');
    const cancel = (value: { deploymentId?: string; buildOnly?: boolean; workloadKey?: string }) =>
      h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '', ...value } } });

    expect(await cancel({ deploymentId: 'dep-other' })).toEqual({ commandIds: [], error: `the command running for ${KEY} is not deployment dep-other` });
    expect((await cancel({ buildOnly: true })).error).toBe(`the deployment of ${KEY} is past its build: its rollout runs`);
    expect((await cancel({ workloadKey: 'application:nothing' })).error).toBe('nothing runs for application:nothing');
    expect((await cancel({ workloadKey: '' })).error).toBe('workload_key is empty');
    expect(h.resultOf('r1')).toBeUndefined();

    expect(await cancel({ deploymentId: 'dep-r1' })).toEqual({ commandIds: ['r1'], error: '' });
    expect((await h.waitResult('r1')).status).toBe(CommandStatus.COMMAND_STATUS_CANCELLED);

    // The next one builds: killBuild stops it, with its own reason.
    await h.receive(aDeploy('b1', 'dep-b1'));
    await h.waitStarted('b1');
    expect(await cancel({ buildOnly: true, deploymentId: 'dep-b1' })).toEqual({ commandIds: ['b1'], error: '' });
    expect(await h.waitResult('b1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: KILL_BUILD_REASON });
    // Nothing runs any more.
    expect((await cancel({})).error).toBe(`nothing runs for ${KEY}`);
  });

  it("refuses a cancel naming another command: the caller's command ended just before, the next one runs on", async () => {
    const h = await harness();
    const cancel = (value: { commandId?: string; deploymentId?: string; buildOnly?: boolean }) =>
      h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '', ...value } } });
    await h.receive(aDeploy('n1'));
    await h.receive(aDeploy('n2'));
    await h.waitStarted('n1');
    expect(await cancel({ commandId: 'n2' })).toEqual({ commandIds: [], error: `the command running for ${KEY} is not command n2` });
    expect(await cancel({ commandId: 'n1', deploymentId: 'dep-n1' })).toEqual({ commandIds: ['n1'], error: '' });
    await h.waitResult('n1');
    await h.waitStarted('n2');

    // The same cancel again (the caller saw n1 as current): n2 is not touched.
    expect(await cancel({ commandId: 'n1', deploymentId: 'dep-n1' })).toEqual({ commandIds: [], error: `the command running for ${KEY} is not command n1` });
    expect(await cancel({ deploymentId: 'dep-n1' })).toEqual({ commandIds: [], error: `the command running for ${KEY} is not deployment dep-n1` });
    expect(h.resultOf('n2')).toBeUndefined();
    expect(await cancel({ commandId: 'n2', buildOnly: true })).toEqual({ commandIds: ['n2'], error: '' });
    expect(await h.waitResult('n2')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: KILL_BUILD_REASON });
    expect(await cancel({ commandId: 'n2' })).toEqual({ commandIds: [], error: `command n2 of ${KEY} has already finished` });
  });

  it('journals a named command not taken in yet as cancelled, so it never runs when it arrives', async () => {
    const h = await harness();
    const cancel = (value: { commandId?: string; buildOnly?: boolean }) =>
      h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: 'dep-u1', buildOnly: false, commandId: '', ...value } } });
    expect(await cancel({ commandId: 'u1', buildOnly: true })).toEqual({ commandIds: [], error: `nothing runs for ${KEY}` });
    expect(h.journal.get('u1')).toBeUndefined();

    expect(await cancel({ commandId: 'u1' })).toEqual({ commandIds: ['u1'], error: '' });
    expect(h.journal.get('u1')).toMatchObject({ state: 'finished', workloadKey: KEY });
    expect(h.resultOf('u1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });

    // It arrives: finished already, its result is reported again, it never runs.
    expect(await h.receive(aDeploy('u1'))).toBe('duplicate');
    expect(h.results.filter((r) => r.commandId === 'u1')).toHaveLength(2);
    await h.receive(aDeploy('u2'));
    await h.waitStarted('u2');
    expect(h.test.started).toEqual(['u2']);
    await h.close();
    expect((await harness(h.dataDir)).journal.get('u1')?.state).toBe('finished');
  });

  it('still abandons the run when the agent stops (it runs again at the next start)', async () => {
    const h = await harness();
    await h.receive(aDeploy('s1'));
    await h.waitStarted('s1');
    await h.close();
    expect(h.resultOf('s1')).toBeUndefined();
    expect(h.test.ended).toEqual([]);

    const again = await harness(h.dataDir);
    expect(again.journal.get('s1')?.state).toBe('started');
    again.schedule('s1');
    await again.waitStarted('s1');
    expect(
      (await again.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '' } } })).commandIds,
    ).toEqual(['s1']);
    expect((await again.waitResult('s1')).status).toBe(CommandStatus.COMMAND_STATUS_CANCELLED);
  });
});

describe('cancelling a command that waits for a deploy slot', () => {
  it('takes the workload\'s next command out of the queue (CANCELLED, never run); killBuild does not', async () => {
    const h = await harness();
    await h.receive(aDeploy('busy', 'dep-busy', 'application:app2'));
    await h.waitStarted('busy');
    await h.receive(aDeploy('w1'));
    await h.receive(aDeploy('w2'));

    const kill = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: true, commandId: '' } } });
    expect(kill).toEqual({ commandIds: [], error: `nothing runs for ${KEY}` });
    const reply = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '' } } });
    expect(reply).toEqual({ commandIds: ['w1'], error: '' });
    expect(h.journal.get('w1')?.state).toBe('finished');
    expect(h.resultOf('w1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(h.test.ended.map((e) => e.id)).toEqual(['w1']);

    // The slot frees: the next one of the workload runs, the cancelled one never does.
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: 'application:app2', deploymentId: '', buildOnly: false, commandId: '' } } });
    await h.waitStarted('w2');
    expect(h.test.started).toEqual(['busy', 'w2']);
  });

  it('cancels the waiting command only when it is the one named', async () => {
    const h = await harness();
    const cancel = (value: { commandId?: string; deploymentId?: string }) =>
      h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '', ...value } } });
    await h.receive(aDeploy('busy', 'dep-busy', 'application:app2'));
    await h.waitStarted('busy');
    await h.receive(aDeploy('w1'));
    await h.receive(aDeploy('w2'));

    expect(await cancel({ commandId: 'w2' })).toEqual({ commandIds: [], error: `the command waiting first for ${KEY} is not command w2` });
    expect(await cancel({ deploymentId: 'dep-w2' })).toEqual({ commandIds: [], error: `the command waiting first for ${KEY} is not deployment dep-w2` });
    expect(h.scheduler.waitingCount).toBe(2);
    expect(await cancel({ commandId: 'w1', deploymentId: 'dep-w1' })).toEqual({ commandIds: ['w1'], error: '' });
    expect(h.resultOf('w1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(await cancel({ commandId: 'w1' })).toEqual({ commandIds: [], error: `the command waiting first for ${KEY} is not command w1` });
    expect(h.resultOf('w2')).toBeUndefined();
    expect(h.test.started).toEqual(['busy']);
  });
});

describe('ending a deploy that never started', () => {
  it('closes its deployment CANCELLED without a call to the engine; a cancelled run is still undone', async () => {
    const docker = recordingDriver();
    const h = await harness(undefined, docker.driver);
    await h.receive(aStop('busy', 'application:app2'));
    await h.waitStarted('busy');
    await h.receive(aDeploy('d1'));
    await h.receive(aDeploy('d2'));

    expect(
      await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: 'dep-d1', buildOnly: false, commandId: 'd1' } } }),
    ).toEqual({ commandIds: ['d1'], error: '' });
    expect(await h.control.handle({ request: { $case: 'cleanQueue', value: { workloadKey: KEY, commandIds: ['d2'] } } })).toEqual({ commandIds: ['d2'], error: '' });
    for (const [id, reason] of [['d1', CANCEL_REASON], ['d2', REMOVED_REASON]]) {
      expect(h.resultOf(id)).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason });
      expect(h.events.filter((e) => e.deploymentId === `dep-${id}`)).toMatchObject([
        { status: DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, reason, logLines: [{ text: `Deployment cancelled: ${reason}` }] },
      ]);
    }
    expect(docker.calls).toEqual([]);
    await h.close();

    // A deploy an earlier agent process started and was cancelled in: its rollout is undone.
    const crashed = await CommandJournal.open(h.dataDir);
    await crashed.accept(aDeploy('k2'));
    await crashed.start('k2');
    await crashed.recordCancel('k2', CANCEL_REASON);
    await crashed.close();
    const again = await harness(h.dataDir, docker.driver);
    again.schedule('k2');
    expect(await again.waitResult('k2')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(docker.calls).toEqual(['servicesByLabel']);
    expect(again.events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, logLines: [{ text: 'Service web was not created: nothing to undo' }, { text: `Deployment cancelled: ${CANCEL_REASON}` }] });
  });
});

describe('a cancel journaled before the agent stopped', () => {
  it('ends the command CANCELLED at the next start instead of running it again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skiff-control-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // What an agent killed between the cancel and the end of the run leaves behind.
    const crashed = await CommandJournal.open(dir);
    await crashed.accept(aDeploy('k1'));
    await crashed.start('k1');
    await crashed.recordCancel('k1', CANCEL_REASON);
    await crashed.close();
    // Reopened once (compacted into one line per command), then by the agent.
    await (await CommandJournal.open(dir)).close();

    const h = await harness(dir);
    expect(h.journal.get('k1')).toMatchObject({ state: 'started', cancelReason: CANCEL_REASON });
    h.schedule('k1');
    expect(await h.waitResult('k1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(h.test.started).toEqual([]);
    expect(h.test.ended).toEqual([{ id: 'k1', outcome: { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON } }]);
  });
});

describe('cleaning a workload queue', () => {
  it('drops the waiting commands (ended CANCELLED, journaled), leaves the running one and other workloads, and never runs them', async () => {
    const h = await harness();
    await h.receive(aDeploy('q1'));
    await h.receive(aDeploy('q2'));
    await h.receive(aDeploy('q3'));
    await h.receive(aDeploy('other', 'dep-other', 'application:app2'));
    await h.waitStarted('q1');

    const reply = await h.control.handle({ request: { $case: 'cleanQueue', value: { workloadKey: KEY, commandIds: [] } } });
    expect(reply).toEqual({ commandIds: ['q2', 'q3'], error: '' });
    // Journaled and reported before the reply.
    for (const id of ['q2', 'q3']) {
      expect(h.journal.get(id)?.state).toBe('finished');
      expect(h.resultOf(id)).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: REMOVED_REASON });
    }
    expect(h.test.ended.map((e) => e.id)).toEqual(['q2', 'q3']);
    expect(h.resultOf('q1')).toBeUndefined();
    expect((await h.control.handle({ request: { $case: 'cleanQueue', value: { workloadKey: KEY, commandIds: [] } } })).error).toBe(
      `no command of ${KEY} waits in the queue`,
    );

    // Delivered again (a redelivery, or the relay re-publishing): not run.
    expect(await h.receive(aDeploy('q2'))).toBe('duplicate');
    expect(h.schedule('q3')).toBe(false);

    // The running one ends; the other workload runs (one slot); the dropped ones never do.
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '' } } });
    await h.waitResult('q1');
    await h.waitStarted('other');
    expect(h.test.started).toEqual(['q1', 'other']);
    await h.close();

    // After a restart they are not resumed either.
    const again = await harness(h.dataDir);
    expect(again.journal.unfinished().map((e) => e.id)).toEqual(['other']);
  });

  it('refuses the listed commands not taken in yet, so they never run when they arrive; the running one stays', async () => {
    const h = await harness();
    await h.receive(aDeploy('r1'));
    await h.waitStarted('r1');
    const reply = await h.control.handle({ request: { $case: 'cleanQueue', value: { workloadKey: KEY, commandIds: ['r1', 'late1', 'late2'] } } });
    expect(reply).toEqual({ commandIds: ['late1', 'late2'], error: '' });
    expect(h.resultOf('late1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: REMOVED_REASON });
    expect(h.journal.get('r1')?.state).toBe('started');

    // They arrive after all: finished already, their result is reported again, nothing runs.
    expect(await h.receive(aDeploy('late1'))).toBe('duplicate');
    expect(h.results.filter((r) => r.commandId === 'late1')).toHaveLength(2);
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: '' } } });
    await h.waitResult('r1');
    expect(await h.receive(aDeploy('late2'))).toBe('duplicate');
    await h.close();
    expect(h.test.started).toEqual(['r1']);
    const again = await harness(h.dataDir);
    expect(again.journal.get('late2')?.state).toBe('finished');
    expect(again.journal.unfinished()).toEqual([]);
  });

  it('a command arriving while the queue is cleaned either ends CANCELLED without running or runs and is not in the reply', async () => {
    // The removal's journal write and the arrival's overlap, in both orders.
    for (const arrivesFirst of [false, true]) {
      const h = await harness();
      await h.receive(aDeploy('r1'));
      await h.waitStarted('r1');
      const clean = () => h.control.handle({ request: { $case: 'cleanQueue', value: { workloadKey: KEY, commandIds: ['late'] } } });
      const [reply, verdict] = arrivesFirst
        ? await Promise.all([h.receive(aDeploy('late')), clean()]).then(([v, r]) => [r, v] as const)
        : await Promise.all([clean(), h.receive(aDeploy('late'))]);
      await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, commandId: 'r1' } } });
      await h.waitResult('r1');
      if (reply.commandIds.includes('late')) {
        // Removed (before it was journaled, or from the queue after): it must never run, here or after a restart.
        expect(['duplicate', 'queued']).toContain(verdict);
        expect(h.resultOf('late')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: REMOVED_REASON });
        await h.scheduler.idle();
        await h.close();
        expect(h.test.started).toEqual(['r1']);
        const again = await harness(h.dataDir);
        expect(again.journal.get('late')?.state).toBe('finished');
        expect(again.test.started).toEqual([]);
      } else {
        expect(verdict).toBe('queued');
        await h.waitStarted('late');
        expect(h.resultOf('late')).toBeUndefined();
      }
      await h.close();
    }
  });
});
