/**
 * DumpDatabase: the engine's dump tool in the database's running container, its output
 * through gzip (and age, with the destination's passphrase) into a multipart upload (dumps/s3-object.ts): no temporary file, memory
 * bounded whatever the size. A failed dump removes the object it began. Idempotent: a
 * second run writes the same key again.
 */
import { PassThrough } from 'node:stream';
import { CommandKind, type Command } from '@skiff/proto';
import { compressInto } from '../dumps/archive-crypto.js';
import type { DatabaseContainers } from '../dumps/database-containers.js';
import { refuseDatabaseCommand } from '../dumps/refusal.js';
import { removeObject, s3Reason, uploadObject } from '../dumps/s3-object.js';
import { dumpCommand } from '../dumps/tool-commands.js';
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
      return refuseDatabaseCommand(target, object) ?? (dumpCommand(target!.engine, target!.database) ? null : 'this engine has no dump tool here');
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'dumpDatabase') return failed('not a DumpDatabase command');
      const { target, object } = command.payload.value;
      const tool = dumpCommand(target!.engine, target!.database)!;
      const containerId = await deps.containers.running(target!);
      if (!containerId) return failed(`no running container of ${target!.workload!.appName}${target!.serviceName ? ` service ${target!.serviceName}` : ''}: start the database first`);
      log.info({ objectKey: object!.key, bucket: object!.bucket, tool: tool.tool }, 'dumping the database');
      const run = await deps.containers.run(containerId, tool, false);
      const body = new PassThrough();
      try {
        await Promise.all([compressInto(run.output, body, object!, signal), uploadObject(object!, body, signal), run.exited()]);
      } catch (err) {
        // The first failure is the cause (S3's answer, or the tool's exit); the rest follow from it.
        run.cancel();
        body.destroy();
        await removeObject(object!).catch(() => undefined);
        if (signal.aborted) throw err;
        const reason = (err as { $metadata?: unknown }).$metadata ? `the upload failed: ${s3Reason(err)}` : (err as Error).message;
        return failed(reason);
      }
      return succeeded();
    },
  };
}
