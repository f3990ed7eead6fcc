// Cancels and queue cleaning on the agent's real command path below NATS: the journal on
// the filesystem, the intake, the scheduler and the runner, with a handler that runs until
// its signal aborts (a long build or rollout stands for it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommandKind, CommandStatus, WorkloadKind, timestampFromDate, type CommandResult, type DeploymentEvent } from '@skiff/proto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { pause, type CommandHandler, type CommandOutcome, type CommandPhase } from '../commands/handler.js';
import { CommandIntake } from '../commands/intake.js';
import { CommandJournal } from '../commands/journal.js';
import { handlerRegistry, runCommand } from '../commands/runner.js';
import { RunningCommands } from '../commands/running-commands.js';
import { CommandScheduler } from '../commands/scheduler.js';
import { waitUntil } from '../testing/wait.js';
import { CANCEL_REASON, CommandControl, KILL_BUILD_REASON, REMOVED_REASON } from './command-control.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const SERVER = 'srv-control';
const KEY = 'application:app1';

/** A deploy handler that says it builds (or rolls out) and then waits on its signal. */
function waitingHandler(phases: Map<string, CommandPhase>) {
  const started: string[] = [];
  const ended: Array<{ id: string; outcome: CommandOutcome }> = [];
  const handler: CommandHandler = {
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    payloadCase: 'deployApplication',
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
        specJson: '{}',
      },
    },
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The agent's command path without NATS: intake → scheduler → runner, and its control. */
async function harness(dir?: string) {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'skiff-control-')));
  const journal = await CommandJournal.open(dataDir);
  const results: CommandResult[] = [];
  const events: DeploymentEvent[] = [];
  const reports = { reportEvent: (e: DeploymentEvent) => events.push(e), reportResult: (r: CommandResult) => results.push(r) };
  const phases = new Map<string, CommandPhase>();
  const test = waitingHandler(phases);
  const handlers = handlerRegistry([test.handler]);
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

    const reply = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false } } });
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
      h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false, ...value } } });

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
      (await again.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false } } })).commandIds,
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

    const kill = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: true } } });
    expect(kill).toEqual({ commandIds: [], error: `nothing runs for ${KEY}` });
    const reply = await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false } } });
    expect(reply).toEqual({ commandIds: ['w1'], error: '' });
    expect(h.journal.get('w1')?.state).toBe('finished');
    expect(h.resultOf('w1')).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(h.test.ended.map((e) => e.id)).toEqual(['w1']);

    // The slot frees: the next one of the workload runs, the cancelled one never does.
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: 'application:app2', deploymentId: '', buildOnly: false } } });
    await h.waitStarted('w2');
    expect(h.test.started).toEqual(['busy', 'w2']);
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
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false } } });
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
    await h.control.handle({ request: { $case: 'cancelWorkload', value: { workloadKey: KEY, deploymentId: '', buildOnly: false } } });
    await h.waitResult('r1');
    expect(await h.receive(aDeploy('late2'))).toBe('duplicate');
    await h.close();
    expect(h.test.started).toEqual(['r1']);
    const again = await harness(h.dataDir);
    expect(again.journal.get('late2')?.state).toBe('finished');
    expect(again.journal.unfinished()).toEqual([]);
  });
});
