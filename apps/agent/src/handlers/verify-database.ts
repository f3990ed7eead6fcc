/**
 * VerifyDatabase: proves a dump restores. A throw-away container of the database's image
 * (scratch-databases.ts; for a compose stack's service, the image it runs as deployed here,
 * read from its container or Swarm service) receives the bucket object (decrypted when it is an .age file)
 * through gunzip into the engine's restore tool (libSQL: its HTTP API through a relay,
 * dumps/libsql-http.ts); then the tables are counted, and the
 * container goes whatever happened. The running database (or stack) is never touched, an
 * image the server lacks is refused, never pulled, and so is one without the tools of the
 * backup's engine (a backup whose databaseType is not the engine the service runs), looked
 * for before its server starts. Idempotent: a
 * second run removes what a first one left and starts again.
 */
import type { Readable } from 'node:stream';
import { CommandKind, type Command, type DatabaseTarget } from '@skiff/proto';
import { feedTool, openArchive } from '../dumps/tool-archives.js';
import type { DatabaseContainers, ToolRun } from '../dumps/database-containers.js';
import { refuseDatabaseCommand } from '../dumps/refusal.js';
import { ImageAbsent, type ScratchDatabases, scratchName } from '../dumps/scratch-databases.js';
import { relayName } from '../dumps/throwaway-leftovers.js';
import { restoreCommand } from '../dumps/tool-commands.js';
import { isLibsql, withLibsql } from '../dumps/tool-runs.js';
import { countCommand, engineName, parseCounts, readyCommand, scratchEnv, verifyTools } from '../dumps/verify-tools.js';
import { type CommandHandler, type CommandOutcome, failed, succeeded } from '../pipeline/handler.js';
import { scrubToolReason } from './tool-reason.js';

export interface VerifyDatabaseDeps {
  containers: DatabaseContainers;
  scratch: ScratchDatabases;
  /** How long the throw-away server may take to accept connections. */
  readyTimeoutMs?: number;
  pollMs?: number;
}

const READY_TIMEOUT_MS = 180_000;
const POLL_MS = 500;

export function verifyDatabaseHandler(deps: VerifyDatabaseDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_VERIFY_DATABASE,
    payloadCase: 'verifyDatabase',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'verifyDatabase') return 'not a VerifyDatabase command';
      const { target, object, image } = command.payload.value;
      const refusal = refuseDatabaseCommand(target, object);
      if (refusal) return refusal;
      // A compose stack's service names none: its image is read here (imageOf).
      if (!image && !target!.serviceName) return 'the command names no image';
      return verifyTools(target!.engine, target!.database) ? null : 'this engine cannot be verified here';
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'verifyDatabase') return failed('not a VerifyDatabase command');
      const { target, object, image } = command.payload.value;
      const name = scratchName(command.commandId);
      await deps.scratch.remove(name);
      await deps.scratch.remove(`${name}-tools`);
      const chosen = await imageOf(target!, image, deps.containers);
      if (typeof chosen === 'string') return failed(chosen);
      log.info({ objectKey: object!.key, bucket: object!.bucket, image: chosen.name }, 'verifying a backup file in a throw-away container');
      const absent = `the image ${chosen.name}${chosen.of} is not on this server: a verification never pulls an image${chosen.of ? ' (deploy the stack here first)' : ''}`;
      const { engine, database } = target!;
      let id: string;
      try {
        const missing = await deps.scratch.missingTools(`${name}-tools`, chosen.ref, verifyTools(engine, database)!);
        if (missing.length > 0) {
          return failed(
            `the image ${chosen.name}${chosen.of} has no ${missing.join(', ')}: it is not a ${engineName(engine)} image, and the backup’s databaseType says its files are ${engineName(engine)} dumps`,
          );
        }
        id = await deps.scratch.start(name, chosen.ref, engine, database);
      } catch (err) {
        if (err instanceof ImageAbsent) return failed(absent);
        return failed(`the throw-away container of ${chosen.name} could not start: ${(err as Error).message}`);
      }
      try {
        const open = () => openArchive(object!);
        const outcome = isLibsql(engine)
          ? await withLibsql(deps.containers, id, scratchEnv(engine, database, '')!, relayName(command.commandId), (http) =>
              verifyIn(id, { notReady: () => http.notReady(), restore: async () => http.restore(), counts: () => http.tableCounts() }, deps, signal, open),
            ).catch((err: unknown) => (signal.aborted ? Promise.reject(err) : failed((err as Error).message)))
          : await verifyIn(id, execAccess(id, target!, deps.containers), deps, signal, open);
        return outcome.reason ? { ...outcome, reason: scrubToolReason(outcome.reason, object, []) } : outcome;
      } finally {
        await deps.scratch.remove(id).catch((err: unknown) => log.warn({ err, container: name }, 'the throw-away container could not be removed'));
      }
    },
  };
}

/** The image to verify with (`of` says whose, in reasons), or why there is none. */
async function imageOf(target: DatabaseTarget, image: string, containers: DatabaseContainers): Promise<{ ref: string; name: string; of: string } | string> {
  if (image) return { ref: image, name: image, of: '' };
  const service = `${target.workload!.appName} service ${target.serviceName}`;
  const deployed = await containers.deployedImage(target);
  if (!deployed) return `no container nor Swarm service of ${service} on this server: deploy the stack first`;
  return { ...deployed, of: ` of ${service}` };
}

/** How a verification reaches the throw-away server: the engine's programs in it, or libsql-server's HTTP API. */
interface ScratchAccess {
  /** Null once the server accepts connections; else why not yet. */
  notReady(): Promise<string | null>;
  restore(): Promise<ToolRun>;
  /** The tables with their row counts; throws when the database does not open. */
  counts(): Promise<{ name: string; rows: string }[]>;
}

/** The engine's programs, run in the throw-away container by docker exec (verify-tools.ts). */
function execAccess(id: string, target: DatabaseTarget, containers: DatabaseContainers): ScratchAccess {
  const { engine, database } = target;
  return {
    notReady: async () => {
      const probe = await containers.run(id, readyCommand(engine, database)!, false);
      probe.output.resume();
      return probe.exited().then(
        () => null,
        (err: Error) => err.message,
      );
    },
    restore: () => containers.run(id, restoreCommand(engine, database)!, true),
    counts: async () => {
      const count = await containers.run(id, countCommand(engine, database)!, false);
      const chunks: Buffer[] = [];
      count.output.on('data', (chunk: Buffer) => chunks.push(chunk));
      await count.exited();
      return parseCounts(Buffer.concat(chunks).toString('utf8'));
    },
  };
}

async function verifyIn(id: string, access: ScratchAccess, deps: VerifyDatabaseDeps, signal: AbortSignal, open: () => Promise<Readable>): Promise<CommandOutcome> {
  const ready = await waitReady(id, access, deps, signal);
  if (ready) return failed(ready);
  let source;
  try {
    source = await open();
  } catch (err) {
    return failed((err as Error).message);
  }
  const why = await feedTool(await access.restore(), source, signal);
  if (why) return failed(why.download ? why.reason : `the file does not restore: ${why.reason}`);
  try {
    return { ...succeeded(), verification: { tables: await access.counts() } };
  } catch (err) {
    return failed(`the restored database does not open: ${(err as Error).message}`);
  }
}

/** Null once the server accepts connections; otherwise why it never did. */
async function waitReady(id: string, access: ScratchAccess, deps: VerifyDatabaseDeps, signal: AbortSignal): Promise<string | null> {
  const until = Date.now() + (deps.readyTimeoutMs ?? READY_TIMEOUT_MS);
  let last = '';
  while (Date.now() < until) {
    signal.throwIfAborted();
    if (!(await deps.scratch.running(id))) {
      const tail = await deps.scratch.logTail(id);
      return `the throw-away database server exited before it accepted connections${tail ? `: ${tail}` : ''}`;
    }
    const why = await access.notReady();
    if (!why) return null;
    last = why;
    await new Promise((r) => setTimeout(r, deps.pollMs ?? POLL_MS));
  }
  return `the throw-away database server did not accept connections in time${last ? ` (${last})` : ''}`;
}
