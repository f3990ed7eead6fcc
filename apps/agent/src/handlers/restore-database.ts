/**
 * RestoreDatabase: the bucket object (decrypted when it is an .age file) through gunzip into the engine's restore tool in the
 * database's running container (the control plane sends it only when the caller accepted a
 * restore into a live database). A failure's reason ends with the tool's stderr.
 */
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CommandKind, type Command } from '@skiff/proto';
import { gzipOf } from '../dumps/archive-crypto.js';
import { refuseDatabaseCommand } from '../dumps/refusal.js';
import { downloadObject, s3Reason } from '../dumps/s3-object.js';
import { restoreCommand } from '../dumps/tool-commands.js';
import { type CommandHandler, failed, succeeded } from '../pipeline/handler.js';
import type { DumpDatabaseDeps } from './dump-database.js';

/** How long a failed restore waits for its tool's exit status. */
const TOOL_EXIT_WAIT_MS = 5_000;

export function restoreDatabaseHandler(deps: DumpDatabaseDeps): CommandHandler {
  return {
    kind: CommandKind.COMMAND_KIND_RESTORE_DATABASE,
    payloadCase: 'restoreDatabase',
    takesSlot: false,
    validate: (command: Command) => {
      if (command.payload?.$case !== 'restoreDatabase') return 'not a RestoreDatabase command';
      const { target, object } = command.payload.value;
      return refuseDatabaseCommand(target, object) ?? (restoreCommand(target!.engine, target!.database) ? null : 'this engine has no restore tool here');
    },
    async run({ command, signal, log }) {
      if (command.payload?.$case !== 'restoreDatabase') return failed('not a RestoreDatabase command');
      const { target, object } = command.payload.value;
      const tool = restoreCommand(target!.engine, target!.database)!;
      const containerId = await deps.containers.running(target!);
      if (!containerId) return failed(`no running container of ${target!.workload!.appName}${target!.serviceName ? ` service ${target!.serviceName}` : ''}: start the database first`);
      let source;
      try {
        source = await downloadObject(object!);
      } catch (err) {
        return failed(`the download failed: ${s3Reason(err)}`);
      }
      try {
        source = await gzipOf(source, object!);
      } catch (err) {
        return failed((err as Error).message);
      }
      log.info({ objectKey: object!.key, bucket: object!.bucket, tool: tool.tool }, 'restoring the database');
      const run = await deps.containers.run(containerId, tool, true);
      run.output.resume();
      const exited = run.exited();
      try {
        await Promise.all([pipeline(source, createGunzip(), run.input!, { signal }), exited]);
      } catch (err) {
        source.destroy();
        run.cancel();
        if (signal.aborted) throw err;
        // A tool that stops reading makes the write fail first: its own exit says why.
        const tool = await Promise.race([exited.then(() => null, (e: Error) => e), new Promise<null>((r) => setTimeout(() => r(null), TOOL_EXIT_WAIT_MS))]);
        return failed(`the restore failed: ${(tool ?? (err as Error)).message}`);
      }
      return succeeded();
    },
  };
}
