/**
 * RestoreDatabase: the bucket object (decrypted when it is an .age file) through gunzip into the engine's restore tool in the
 * database's running container (libSQL: its HTTP API through a relay, in one transaction,
 * dumps/libsql-http.ts; the control plane sends it only when the caller accepted a
 * restore into a live database). A failure's reason ends with the tool's stderr, scrubbed of the
 * command's keys and passphrase and of the container's secret variables (tool-reason.ts).
 */
import { CommandKind, type Command } from '@skiff/proto';
import { notRunning } from '../dumps/database-containers.js';
import { type FeedFailure, feedTool, openArchive } from '../dumps/tool-archives.js';
import { refuseDatabaseCommand } from '../dumps/refusal.js';
import { relayName } from '../dumps/throwaway-leftovers.js';
import { toolName, withTool } from '../dumps/tool-runs.js';
import { scrubToolReason, secretValuesOfEnv } from './tool-reason.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';
import type { DumpDatabaseDeps } from './dump-database.js';


export function restoreDatabaseHandler(deps: DumpDatabaseDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_RESTORE_DATABASE,
    payloadCase: 'restoreDatabase',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'restoreDatabase') return 'not a RestoreDatabase command';
      const { target, object } = command.payload.value;
      return refuseDatabaseCommand(target, object) ?? (toolName(target!, 'restore') !== null ? null : 'this engine has no restore tool here');
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'restoreDatabase') return failed('not a RestoreDatabase command');
      const { target, object } = command.payload.value;
      const containerId = await deps.containers.running(target!);
      if (!containerId) return failed(notRunning(target!));
      const env = await deps.containers.environment(containerId);
      const refused = (why: string) => failed(scrubToolReason(why, object, secretValuesOfEnv(env)));
      let source;
      try {
        source = await openArchive(object!);
      } catch (err) {
        return refused((err as Error).message);
      }
      log.info({ objectKey: object!.key, bucket: object!.bucket, tool: toolName(target!, 'restore') }, 'restoring the database');
      let why: FeedFailure | null;
      try {
        why = await withTool(deps.containers, target!, containerId, env, 'restore', relayName(command.commandId), (run) => feedTool(run, source, signal));
      } catch (err) {
        source.destroy();
        if (signal.aborted) throw err;
        why = { reason: (err as Error).message, download: false };
      }
      if (why) return refused(why.download ? why.reason : `the restore failed: ${why.reason}`);
      return succeeded();
    },
  };
}
