// The command journal on the real filesystem: durable records, replay, compaction.
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CommandKind,
  CommandStatus,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  type Command,
  type CommandResult,
  type DeploymentEvent,
} from '@skiff/proto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandJournal, JOURNAL_FILE, JournalError } from './journal.js';

let dir: string;
const open: CommandJournal[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-journal-'));
});
afterEach(async () => {
  for (const j of open.splice(0)) await j.close();
  await rm(dir, { recursive: true, force: true });
});

async function openJournal(options: Parameters<typeof CommandJournal.open>[1] = {}): Promise<CommandJournal> {
  const journal = await CommandJournal.open(dir, options);
  open.push(journal);
  return journal;
}

function aCommand(id: string, overrides: Partial<Command> = {}): Command {
  return {
    commandId: id,
    serverId: 'srv1',
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: 'application:app1',
    deadline: timestampFromDate(new Date('2030-01-01T00:00:00Z')),
    createdAt: timestampFromDate(new Date('2026-01-01T00:00:00Z')),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: 'dep1',
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app1', appName: 'web' },
        image: 'busybox:latest',
        env: { TOKEN: 'very-secret' },
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: '{}',
      },
    },
    ...overrides,
  };
}

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the condition did not hold within 2 s');
}

/** Recent enough to stay within the default retention. */
const FINISHED = new Date(Math.floor(Date.now() / 1000) * 1000);

function anEvent(sequence: number, status = DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED): DeploymentEvent {
  const time = timestampFromDate(new Date('2026-01-01T00:00:01.250Z'));
  return { deploymentId: 'dep1', commandId: 'c1', sequence: String(sequence), status, logLines: [{ time, text: `line ${sequence}` }], reason: '', occurredAt: time };
}

const aResult = (id: string, finishedAt = FINISHED): CommandResult => ({
  commandId: id,
  status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
  reason: '',
  finishedAt: timestampFromDate(finishedAt),
});

describe('CommandJournal', () => {
  it('records a command through its life and finds it again after a reopen', async () => {
    const journal = await openJournal();
    await journal.accept(aCommand('c1'));
    await journal.accept(aCommand('c2', { workloadKey: 'application:app2' }));
    await journal.start('c1');
    await journal.recordEvent('c1', anEvent(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING));
    await journal.recordEvent('c1', anEvent(2));
    await journal.finish('c1', aResult('c1'));
    await journal.start('c2');
    expect(journal.get('c1')).toMatchObject({ state: 'finished', command: null, attempts: 1 });
    expect(journal.unfinished().map((e) => e.id)).toEqual(['c2']);
    await journal.close();

    const again = await openJournal();
    expect(again.get('c1')).toEqual({
      id: 'c1',
      workloadKey: 'application:app1',
      kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
      state: 'finished',
      acceptedAt: expect.any(String),
      command: null,
      attempts: 1,
      events: [anEvent(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING), anEvent(2)],
      result: aResult('c1'),
      delivered: false,
    });
    const c2 = again.get('c2');
    expect(c2).toMatchObject({ state: 'started', attempts: 1 });
    expect(c2?.command).toEqual(aCommand('c2', { workloadKey: 'application:app2' }));

    // Its result not delivered yet: reported again at a start, until the control plane took it.
    expect(again.undelivered().map((e) => e.id)).toEqual(['c1']);
    await again.delivered('c1');
    await again.delivered('c2');
    await again.close();
    const third = await openJournal();
    expect(third.get('c1')?.delivered).toBe(true);
    expect(third.undelivered()).toEqual([]);
    expect(third.get('c2')).toMatchObject({ state: 'started' });
    expect(third.get('c2')?.delivered).toBeUndefined();
  });

  it('refuses to journal an id twice and to change a finished command', async () => {
    const journal = await openJournal();
    await journal.accept(aCommand('c1'));
    await expect(journal.accept(aCommand('c1'))).rejects.toBeInstanceOf(JournalError);
    await journal.finish('c1', aResult('c1'));
    await expect(journal.start('c1')).rejects.toThrow('it has finished');
    await expect(journal.start('nope')).rejects.toThrow('it is not journaled');
    await journal.acceptFinished(
      { id: 'r1', workloadKey: '', kind: CommandKind.COMMAND_KIND_UNSPECIFIED },
      { ...aResult('r1'), status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'bad' },
    );
    await expect(journal.acceptFinished({ id: 'r1', workloadKey: '', kind: 0 }, aResult('r1'))).rejects.toBeInstanceOf(JournalError);
  });

  it('of two first records for one id written at once, the first wins and the other fails, also after a reopen', async () => {
    const journal = await openJournal();
    const cancelled = { ...aResult('c1'), status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: 'removed' };
    const [finished, accepted] = await Promise.allSettled([
      journal.acceptFinished({ id: 'c1', workloadKey: 'application:app1', kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION }, cancelled),
      journal.accept(aCommand('c1')),
    ]);
    expect(finished.status).toBe('fulfilled');
    expect(accepted.status === 'rejected' && accepted.reason).toBeInstanceOf(JournalError);
    await journal.settled('c1');
    expect(journal.get('c1')).toMatchObject({ state: 'finished', result: cancelled });

    const [first, second] = await Promise.allSettled([
      journal.accept(aCommand('c2')),
      journal.acceptFinished({ id: 'c2', workloadKey: 'application:app1', kind: 0 }, cancelled),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('rejected');
    await journal.close();
    const again = await openJournal();
    expect(again.get('c1')?.state).toBe('finished');
    expect(again.get('c2')?.state).toBe('accepted');
  });

  it('keeps the file private and drops the command (and its env values) once finished', async () => {
    const journal = await openJournal();
    await journal.accept(aCommand('c1'));
    expect((await stat(join(dir, JOURNAL_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await journal.finish('c1', aResult('c1'));
    await journal.close();
    await openJournal(); // compacts
    const text = await readFile(join(dir, JOURNAL_FILE), 'utf8');
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(Buffer.from(text).toString('base64')).not.toContain(Buffer.from('very-secret').toString('base64'));
    expect(text).not.toContain('very-secret');
    expect(JSON.parse(text)).toMatchObject({ op: 'entry', id: 'c1', state: 'finished', command: null });
  });

  it('drops a finished command\'s payload from the file while running, and appends to the compacted file', async () => {
    const journal = await openJournal({ compactAfterMs: 10 });
    await journal.accept(aCommand('c1'));
    await journal.accept(aCommand('c2', { workloadKey: 'application:app2' }));
    const payloadOnDisk = async () =>
      (await readFile(join(dir, JOURNAL_FILE), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; command?: string | null })
        .filter((l) => typeof l.command === 'string' && Buffer.from(l.command!, 'base64').includes('very-secret'))
        .map((l) => l.id);
    expect(await payloadOnDisk()).toEqual(['c1', 'c2']);
    await journal.finish('c1', aResult('c1'));
    await waitFor(async () => (await payloadOnDisk()).length === 1);
    expect(await payloadOnDisk()).toEqual(['c2']);
    expect((await stat(join(dir, JOURNAL_FILE))).mode & 0o777).toBe(0o600);
    // c2, still to run, keeps its payload; what comes after lands in the new file.
    await journal.start('c2');
    await journal.accept(aCommand('c3'));
    await journal.close();
    const again = await openJournal();
    expect(again.get('c1')).toMatchObject({ state: 'finished', command: null });
    expect(again.get('c2')).toMatchObject({ state: 'started', attempts: 1 });
    expect(again.get('c3')?.command).toEqual(aCommand('c3'));
  });

  it('forgets finished commands past the retention period while running', async () => {
    let now = new Date();
    const journal = await openJournal({ compactAfterMs: 10, retentionMs: 60_000, now: () => now });
    await journal.accept(aCommand('old'));
    await journal.finish('old', aResult('old', now));
    now = new Date(now.getTime() + 120_000);
    await journal.accept(aCommand('new'));
    await journal.finish('new', aResult('new', now));
    await journal.compactNow();
    expect(journal.get('old')).toBeUndefined();
    expect(journal.get('new')?.state).toBe('finished');
    expect(await readFile(join(dir, JOURNAL_FILE), 'utf8')).not.toContain('"old"');
  });

  it('does not bring back a command forgotten while its delivery was being journaled, nor count its mark as torn', async () => {
    let now = new Date();
    const journal = await openJournal({ compactAfterMs: 60_000, retentionMs: 60_000, now: () => now });
    await journal.accept(aCommand('old'));
    await journal.finish('old', aResult('old', now));
    now = new Date(now.getTime() + 120_000);
    // The compaction that forgets it is queued first; the control plane takes its result meanwhile.
    await Promise.all([journal.compactNow(), journal.delivered('old')]);
    expect(journal.get('old')).toBeUndefined();
    await journal.close();
    const skipped: number[] = [];
    const again = await openJournal({ onSkippedLines: (n) => skipped.push(n) });
    expect(skipped).toEqual([]);
    expect(again.get('old')).toBeUndefined();
  });

  it('skips a line torn by a crash and goes on appending after it', async () => {
    const journal = await openJournal();
    await journal.accept(aCommand('c1'));
    await journal.close();
    await appendFile(join(dir, JOURNAL_FILE), '{"op":"start","id":"c1","at":"2026-');
    const skipped: number[] = [];
    const again = await openJournal({ onSkippedLines: (n) => skipped.push(n) });
    expect(skipped).toEqual([1]);
    expect(again.get('c1')?.state).toBe('accepted');
    await again.start('c1');
    await again.close();
    expect((await openJournal()).get('c1')).toMatchObject({ state: 'started', attempts: 1 });
  });

  it('forgets finished commands older than the retention period, never unfinished ones', async () => {
    const journal = await openJournal();
    await journal.accept(aCommand('old'));
    await journal.finish('old', aResult('old', new Date('2026-01-01T00:00:00Z')));
    await journal.accept(aCommand('recent'));
    await journal.finish('recent', aResult('recent', new Date('2026-01-09T00:00:00Z')));
    await journal.accept(aCommand('pending'));
    await journal.close();
    const later = await openJournal({ retentionMs: 7 * 24 * 3600_000, now: () => new Date('2026-01-10T00:00:00Z') });
    expect(later.get('old')).toBeUndefined();
    expect(later.get('recent')?.state).toBe('finished');
    expect(later.get('pending')?.state).toBe('accepted');
  });
});
