/**
 * The agent's durable record of the commands it has taken in (ARCHITECTURE.md, "Commands").
 *
 * A JSON-lines file, `commands.jsonl` in the agent's data directory (0700; the file 0600).
 * Every change is appended and fsynced before the caller goes on, so an acked message is
 * always in the journal, and a command journaled as finished is never run again:
 *
 * - `accept` (before the NATS ack): the command itself, base64 protobuf, so the agent can
 *   run it after a restart although JetStream will not deliver it again. It may carry env
 *   values (secrets): the file is private, and the command is dropped once it finished.
 * - `start`: a handler began to act on it (counted, so a resumed run knows it is one).
 * - `event`: a deployment event, journaled before it is sent, so sequences never repeat
 *   and a restarted or re-asked agent re-sends the same events.
 * - `cancel`: a cancel of the running command was asked (CancelWorkload); a run that the
 *   agent's end interrupted before it could finish is then ended CANCELLED at the next
 *   start instead of being run again.
 * - `finish`: the final CommandResult, re-reported unchanged whenever the id comes again.
 * - `delivered`: the control plane took the result (or refused it for good). A finished
 *   command without it is reported again at the next start: the report queue lives in
 *   memory, and an agent stopped while the control plane was away would otherwise leave
 *   the command's records `running` until its deadline.
 * - `entry`: a whole record at once (compaction, or a command rejected on arrival).
 *
 * On open the file is replayed (a torn last line from a crash is skipped) and rewritten
 * compactly: finished commands older than the retention period are forgotten, finished
 * ones keep only their result and events. While the agent runs it is rewritten so again
 * shortly after commands finish (`compactAfterMs`), so a finished command's payload, env
 * values included, leaves the disk within about a second, and the file does not grow
 * with the agent's uptime. One journal per data directory and process.
 */
import { mkdir, open, rename, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, CommandKind, CommandResult, DeploymentEvent } from '@skiff/proto';

export const JOURNAL_FILE = 'commands.jsonl';
const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export type JournalState = 'accepted' | 'started' | 'finished';

export interface JournalEntry {
  readonly id: string;
  readonly workloadKey: string;
  readonly kind: CommandKind;
  readonly state: JournalState;
  /** When the agent first took the command in (ISO). */
  readonly acceptedAt: string;
  /** The command as received, until it finished. */
  readonly command: Command | null;
  /** How many times a handler started it (more than one: resumed after a restart). */
  readonly attempts: number;
  /** Deployment events emitted for it, in sequence order. */
  readonly events: readonly DeploymentEvent[];
  readonly result: CommandResult | null;
  /** Why it was cancelled while it ran (`cancel`), or null. */
  readonly cancelReason?: string | null;
  /** Whether the control plane took its result (`delivered`); false until then. */
  readonly delivered?: boolean;
}

export interface JournalOptions {
  /** Finished commands older than this are forgotten at the next open. Default 30 days. */
  retentionMs?: number;
  now?: () => Date;
  /** Told how many unreadable lines were skipped on open (never their content). */
  onSkippedLines?: (count: number) => void;
  /** How long after a command finishes the file is compacted (one rewrite for what finishes meanwhile). Default 1 s. */
  compactAfterMs?: number;
  /** Told when a compaction while running failed (the file stays as it was, appends go on). */
  onCompactionError?: (err: unknown) => void;
}

type Line =
  | { op: 'accept'; id: string; at: string; workloadKey: string; kind: number; command: string }
  | { op: 'start'; id: string; at: string }
  | { op: 'event'; id: string; event: unknown }
  | { op: 'cancel'; id: string; at: string; reason: string }
  | { op: 'finish'; id: string; at: string; result: unknown }
  | { op: 'delivered'; id: string }
  | {
      op: 'entry';
      id: string;
      workloadKey: string;
      kind: number;
      state: JournalState;
      acceptedAt: string;
      command: string | null;
      attempts: number;
      events: unknown[];
      result: unknown;
      cancelReason?: string | null;
      delivered?: boolean;
    };

export class JournalError extends Error {
  override name = 'JournalError';
}

export class CommandJournal {
  private readonly entries = new Map<string, JournalEntry>();
  /** Ids whose first record is being written: taken, so a second first record fails at once. */
  private readonly arriving = new Map<string, Promise<unknown>>();
  private handle: FileHandle | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private compaction: NodeJS.Timeout | null = null;

  private constructor(
    private readonly dir: string,
    private readonly now: () => Date,
    private readonly options: JournalOptions,
  ) {}

  get path(): string {
    return join(this.dir, JOURNAL_FILE);
  }

  /** Opens (creating) the journal in `dir`, replays it and compacts it. */
  static async open(dir: string, options: JournalOptions = {}): Promise<CommandJournal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const now = options.now ?? (() => new Date());
    const journal = new CommandJournal(dir, now, options);
    const skipped = await journal.replay();
    if (skipped > 0) options.onSkippedLines?.(skipped);
    journal.forgetOld();
    await journal.compact();
    journal.handle = await open(journal.path, 'a', 0o600);
    return journal;
  }

  get(id: string): JournalEntry | undefined {
    return this.entries.get(id);
  }

  /** Commands taken in but not finished, in the order they were accepted. */
  unfinished(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => e.state !== 'finished');
  }

  /** Finished commands whose result the control plane has not taken yet, in the order they were accepted. */
  undelivered(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => e.state === 'finished' && e.result !== null && e.delivered === false);
  }

  /** Records a command before it is acked. Fails when its id is already journaled (or being journaled). */
  async accept(command: Command): Promise<JournalEntry> {
    const id = command.commandId;
    const at = this.now().toISOString();
    const line: Line = {
      op: 'accept',
      id,
      at,
      workloadKey: command.workloadKey,
      kind: command.kind,
      command: Buffer.from(Command.encode(command).finish()).toString('base64'),
    };
    return this.first(id, line, {
      id,
      workloadKey: command.workloadKey,
      kind: command.kind,
      state: 'accepted',
      acceptedAt: at,
      command,
      attempts: 0,
      events: [],
      result: null,
    });
  }

  /** Records a command that ends as it arrives (rejected, or cancelled before it came): accepted and finished at once. */
  async acceptFinished(
    head: { id: string; workloadKey: string; kind: CommandKind },
    result: CommandResult,
  ): Promise<JournalEntry> {
    const entry: JournalEntry = {
      ...head,
      state: 'finished',
      acceptedAt: this.now().toISOString(),
      command: null,
      attempts: 0,
      events: [],
      result,
      delivered: false,
    };
    return this.first(head.id, entryLine(entry), entry);
  }

  /**
   * Resolves once the id's first record, if one is being written, is written (or failed):
   * `get` then tells what the other writer recorded.
   */
  async settled(id: string): Promise<void> {
    await this.arriving.get(id);
  }

  /**
   * Writes a command's first record. The id is taken before the write begins, so of two
   * first records for one id (the intake's accept, a CleanQueue's acceptFinished) one wins
   * and the other fails with JournalError, instead of both succeeding and the later one
   * overwriting the other in memory.
   */
  private first(id: string, line: Line, entry: JournalEntry): Promise<JournalEntry> {
    if (this.entries.has(id) || this.arriving.has(id)) return Promise.reject(new JournalError(`command ${id} is already journaled`));
    const written = this.append([line]).then(() => this.put(entry));
    const done = written.finally(() => this.arriving.delete(id));
    this.arriving.set(id, done.catch(() => {}));
    return done;
  }

  /** Records that a handler begins (again) to act on the command. */
  async start(id: string): Promise<JournalEntry> {
    const entry = this.require(id, 'start');
    await this.append([{ op: 'start', id, at: this.now().toISOString() }]);
    return this.put({ ...entry, state: 'started', attempts: entry.attempts + 1 });
  }

  /** Records a deployment event before it is sent. */
  async recordEvent(id: string, event: DeploymentEvent): Promise<JournalEntry> {
    const entry = this.require(id, 'record an event of');
    await this.append([{ op: 'event', id, event: DeploymentEvent.toJSON(event) }]);
    return this.put({ ...entry, events: [...entry.events, event] });
  }

  /** Records that a cancel of the (running) command was asked, before the run is aborted. */
  async recordCancel(id: string, reason: string): Promise<JournalEntry> {
    const entry = this.require(id, 'cancel');
    await this.append([{ op: 'cancel', id, at: this.now().toISOString(), reason }]);
    return this.put({ ...entry, cancelReason: reason });
  }

  /** Records how the command ended; the command's own content is dropped from memory. */
  async finish(id: string, result: CommandResult): Promise<JournalEntry> {
    const entry = this.require(id, 'finish');
    await this.append([{ op: 'finish', id, at: this.now().toISOString(), result: CommandResult.toJSON(result) }]);
    this.compactSoon();
    return this.put({ ...entry, state: 'finished', command: null, result, delivered: false });
  }

  /** Records that the control plane took the finished command's result; nothing for a command no longer journaled or taken already. */
  async delivered(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.state !== 'finished' || entry.delivered !== false) return;
    // A compaction queued before may forget it (retention): then nothing is written, nor brought back.
    await this.append([{ op: 'delivered', id }], () => this.entries.has(id));
    const current = this.entries.get(id);
    if (current) this.put({ ...current, delivered: true });
  }

  async close(): Promise<void> {
    if (this.compaction) clearTimeout(this.compaction);
    this.compaction = null;
    await this.tail.catch(() => {});
    await this.handle?.close();
    this.handle = null;
  }

  private require(id: string, what: string): JournalEntry {
    const entry = this.entries.get(id);
    if (!entry) throw new JournalError(`cannot ${what} command ${id}: it is not journaled`);
    if (entry.state === 'finished') throw new JournalError(`cannot ${what} command ${id}: it has finished`);
    return entry;
  }

  private put(entry: JournalEntry): JournalEntry {
    this.entries.set(entry.id, entry);
    return entry;
  }

  /** Appends lines and fsyncs, one write after another (none when `still` says no by then); memory changes only after success. */
  private append(lines: Line[], still: () => boolean = () => true): Promise<void> {
    const text = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
    const write = this.tail.then(async () => {
      if (!this.handle) throw new JournalError('the journal is closed');
      if (!still()) return;
      await this.handle.appendFile(text, 'utf8');
      await this.handle.datasync();
    });
    this.tail = write.catch(() => {});
    return write;
  }

  private async replay(): Promise<number> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let skipped = 0;
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      try {
        this.apply(JSON.parse(raw) as Line);
      } catch {
        skipped++;
      }
    }
    return skipped;
  }

  private apply(line: Line): void {
    switch (line.op) {
      case 'accept':
        this.put({
          id: line.id,
          workloadKey: line.workloadKey,
          kind: line.kind,
          state: 'accepted',
          acceptedAt: line.at,
          command: Command.decode(Buffer.from(line.command, 'base64')),
          attempts: 0,
          events: [],
          result: null,
        });
        return;
      case 'start': {
        const e = this.known(line.id);
        this.put({ ...e, state: 'started', attempts: e.attempts + 1 });
        return;
      }
      case 'event': {
        const e = this.known(line.id);
        this.put({ ...e, events: [...e.events, DeploymentEvent.fromJSON(line.event)] });
        return;
      }
      case 'cancel': {
        const e = this.known(line.id);
        this.put({ ...e, cancelReason: line.reason });
        return;
      }
      case 'finish': {
        const e = this.known(line.id);
        this.put({ ...e, state: 'finished', command: null, result: CommandResult.fromJSON(line.result), delivered: false });
        return;
      }
      case 'delivered': {
        // A mark for a command forgotten since means nothing.
        const e = this.entries.get(line.id);
        if (e) this.put({ ...e, delivered: true });
        return;
      }
      case 'entry':
        this.put({
          id: line.id,
          workloadKey: line.workloadKey,
          kind: line.kind,
          state: line.state,
          acceptedAt: line.acceptedAt,
          command: line.command === null ? null : Command.decode(Buffer.from(line.command, 'base64')),
          attempts: line.attempts,
          events: line.events.map((e) => DeploymentEvent.fromJSON(e)),
          result: line.result === null ? null : CommandResult.fromJSON(line.result),
          cancelReason: line.cancelReason ?? null,
          // A finished one written before deliveries were journaled counts as delivered (not sent again at every start).
          ...(line.state === 'finished' ? { delivered: line.delivered ?? true } : {}),
        });
        return;
      default:
        throw new JournalError('unknown journal line');
    }
  }

  private known(id: string): JournalEntry {
    const entry = this.entries.get(id);
    if (!entry) throw new JournalError(`journal line for unknown command ${id}`);
    return entry;
  }

  /** Compacts the file once, `compactAfterMs` from now, unless one is due already. */
  private compactSoon(): void {
    if (this.compaction || !this.handle) return;
    this.compaction = setTimeout(() => {
      this.compaction = null;
      this.compactNow().catch((err: unknown) => this.options.onCompactionError?.(err));
    }, this.options.compactAfterMs ?? 1_000);
    this.compaction.unref();
  }

  /** Rewrites the file between two appends (in the append chain), then appends to the new file. */
  compactNow(): Promise<void> {
    const run = this.tail.then(async () => {
      if (!this.handle) return;
      this.forgetOld();
      await this.compact();
      const old = this.handle;
      this.handle = await open(this.path, 'a', 0o600);
      await old.close();
    });
    this.tail = run.catch(() => {});
    return run;
  }

  private forgetOld(): void {
    this.forgetOlderThan(this.now().getTime() - (this.options.retentionMs ?? DEFAULT_RETENTION_MS));
  }

  private forgetOlderThan(cutoffMs: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.state !== 'finished') continue;
      const finished = entry.result?.finishedAt ? Number(entry.result.finishedAt.seconds) * 1000 : NaN;
      const at = Number.isFinite(finished) ? finished : Date.parse(entry.acceptedAt);
      if (at < cutoffMs) this.entries.delete(id);
    }
  }

  /** Rewrites the file with one line per command, atomically (temp file, fsync, rename). */
  private async compact(): Promise<void> {
    const tmp = `${this.path}.tmp`;
    const file = await open(tmp, 'w', 0o600);
    try {
      const text = [...this.entries.values()].map((e) => `${JSON.stringify(entryLine(e))}\n`).join('');
      await file.writeFile(text, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, this.path);
    const directory = await open(this.dir, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }
}

function entryLine(e: JournalEntry): Line {
  return {
    op: 'entry',
    id: e.id,
    workloadKey: e.workloadKey,
    kind: e.kind,
    state: e.state,
    acceptedAt: e.acceptedAt,
    command: e.command ? Buffer.from(Command.encode(e.command).finish()).toString('base64') : null,
    attempts: e.attempts,
    events: e.events.map((ev) => DeploymentEvent.toJSON(ev)),
    result: e.result ? CommandResult.toJSON(e.result) : null,
    ...(e.cancelReason ? { cancelReason: e.cancelReason } : {}),
    ...(e.delivered === false ? { delivered: false } : {}),
  };
}
