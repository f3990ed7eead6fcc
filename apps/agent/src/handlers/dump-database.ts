/**
 * DumpDatabase: the engine's dump tool in the database's running container (libSQL: its HTTP
 * API's `GET /dump` through a relay, dumps/tool-runs.ts), its output through gzip (and age,
 * with the destination's passphrase) into a multipart upload (dumps/s3-object.ts): no
 * temporary file, memory bounded whatever the size. A failed dump removes the object it
 * began. Idempotent: a second run writes the same key again.
 */
import { scrubToolReason, secretValuesOfEnv } from './tool-reason.js';
import { CommandKind, type Command } from '@skiff/proto';
import { archiveToolOutput } from '../dumps/tool-archives.js';
import { type DatabaseContainers, notRunning } from '../dumps/database-containers.js';
import { refuseDatabaseCommand } from '../dumps/refusal.js';
import { relayName } from '../dumps/throwaway-leftovers.js';
import { toolName, withTool } from '../dumps/tool-runs.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';

export interface DumpDatabaseDeps {
  containers: DatabaseContainers;
}

export function dumpDatabaseHandler(deps: DumpDatabaseDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_DUMP_DATABASE,
    payloadCase: 'dumpDatabase',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'dumpDatabase') return 'not a DumpDatabase command';
      const { target, object } = command.payload.value;
      return refuseDatabaseCommand(target, object) ?? (toolName(target!, 'dump') !== null ? null : 'this engine has no dump tool here');
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'dumpDatabase') return failed('not a DumpDatabase command');
      const { target, object } = command.payload.value;
      const containerId = await deps.containers.running(target!);
      if (!containerId) return failed(notRunning(target!));
      const env = await deps.containers.environment(containerId);
      log.info({ objectKey: object!.key, bucket: object!.bucket, tool: toolName(target!, 'dump') }, 'dumping the database');
      let why: string | null;
      try {
        why = await withTool(deps.containers, target!, containerId, env, 'dump', relayName(command.commandId), (run) => archiveToolOutput(run, object!, signal));
      } catch (err) {
        if (signal.aborted) throw err;
        why = (err as Error).message;
      }
      if (why) return failed(scrubToolReason(why, object, secretValuesOfEnv(env)));
      return succeeded();
    },
  };
}
