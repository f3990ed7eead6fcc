/**
 * What happens to a command message before it is acked: decode, de-duplicate against the
 * journal, check, journal, queue. When `receive` resolves, the message may be acked: its
 * effect is recorded durably (journaled, or nothing to do). When it rejects (the journal
 * could not be written), the message must not be acked, so JetStream delivers it again.
 *
 * - Already journaled and finished: not run again; its events and result are re-reported.
 * - Already journaled, not finished: it is queued or running here; nothing to do.
 * - Undecodable, for another server, of an unknown kind, or with arguments its handler
 *   refuses: journaled as finished with COMMAND_STATUS_REJECTED, and reported. A message
 *   without any command id (no body id, no `Nats-Msg-Id`) cannot be reported: logged, acked.
 */
import { Command, CommandKind, CommandStatus, commandKindToJSON, timestampFromDate } from '@skiff/proto';
import type { Logger } from 'pino';
import type { Reports } from './reports.js';
import { JournalError, type CommandJournal, type JournalEntry } from './journal.js';
import { reReport, type HandlerRegistry } from './runner.js';

export type IntakeVerdict = 'queued' | 'duplicate' | 'rejected' | 'dropped';

export interface IntakeDeps {
  serverId: string;
  journal: CommandJournal;
  reports: Reports;
  handlers: HandlerRegistry;
  /** Queues a journaled command; false when it was already queued or running. */
  schedule: (entry: JournalEntry) => boolean;
  log: Logger;
  now?: () => Date;
}

export class CommandIntake {
  private readonly now: () => Date;

  constructor(private readonly deps: IntakeDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async receive(data: Uint8Array, msgId: string | undefined): Promise<IntakeVerdict> {
    let command: Command | null = null;
    let problem: string | null = null;
    try {
      command = Command.decode(data);
    } catch (err) {
      problem = `malformed command: ${(err as Error).message}`;
    }
    const id = command?.commandId || msgId || '';
    if (id === '') {
      this.deps.log.warn({ problem: problem ?? 'no command id' }, 'command message without a command id dropped');
      return 'dropped';
    }

    const known = this.deps.journal.get(id);
    if (known) return this.again(known);

    problem ??= await this.check(command!);
    const head = {
      id,
      workloadKey: command?.workloadKey ?? '',
      kind: command?.kind ?? CommandKind.COMMAND_KIND_UNSPECIFIED,
    };
    if (problem !== null) {
      const result = {
        commandId: id,
        status: CommandStatus.COMMAND_STATUS_REJECTED,
        reason: problem,
        finishedAt: timestampFromDate(this.now()),
      };
      const rejected = await this.firstRecord(id, () => this.deps.journal.acceptFinished(head, result));
      if (rejected === 'duplicate') return rejected;
      this.deps.reports.reportResult(result);
      this.deps.log.warn({ commandId: id, reason: problem }, 'command rejected');
      return 'rejected';
    }

    const entry = await this.firstRecord(id, () => this.deps.journal.accept({ ...command!, commandId: id }));
    if (entry === 'duplicate') return entry;
    this.deps.schedule(entry);
    this.deps.log.debug({ commandId: id, kind: commandKindToJSON(entry.kind), workloadKey: entry.workloadKey }, 'command queued');
    return 'queued';
  }

  /** A command journaled already: finished ones are re-reported, others are queued or running here. */
  private again(known: JournalEntry): 'duplicate' {
    if (known.state === 'finished') {
      this.deps.log.info({ commandId: known.id }, 'command already handled: its result is reported again');
      reReport(known, this.deps.reports);
    } else {
      this.deps.schedule(known);
    }
    return 'duplicate';
  }

  /**
   * Writes the command's first journal record. Another writer may have taken the id in the
   * meantime (a CleanQueue or cancel journaling it as finished before it arrived): then what
   * that one recorded counts, as for a duplicate; if its write failed, this message is not
   * acked and comes again.
   */
  private async firstRecord(id: string, write: () => Promise<JournalEntry>): Promise<JournalEntry | 'duplicate'> {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof JournalError)) throw err;
      await this.deps.journal.settled(id);
      const known = this.deps.journal.get(id);
      if (!known) throw err;
      return this.again(known);
    }
  }

  private async check(command: Command): Promise<string | null> {
    if (command.serverId !== this.deps.serverId) {
      return `the command is for server "${command.serverId}", not this server ("${this.deps.serverId}")`;
    }
    const kindName = commandKindToJSON(command.kind);
    if (command.kind === CommandKind.COMMAND_KIND_UNSPECIFIED || kindName === 'UNRECOGNIZED') {
      return `unknown command kind ${command.kind}`;
    }
    const handler = this.deps.handlers.get(command.kind);
    if (!handler) return `this agent does not handle ${kindName} commands`;
    if (command.payload?.$case !== handler.payloadCase) {
      return `a ${kindName} command must carry ${handler.payloadCase}, not ${command.payload?.$case ?? 'nothing'}`;
    }
    return handler.validate(command);
  }
}
