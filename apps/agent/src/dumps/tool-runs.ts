/**
 * Where a database command's tool runs: for most engines their own program inside the
 * database's container (docker exec, tool-commands.ts); for libSQL, whose image has none,
 * libsql-server's HTTP API through a relay in the container's network namespace
 * (libsql-http.ts). Either way the command gets a ToolRun (tool-archives.ts moves the bytes).
 */
import { PassThrough } from 'node:stream';
import { DatabaseEngine } from '@skiff/proto';
import type { DatabaseContainers, ToolRun } from './database-containers.js';
import { LibsqlHttp, libsqlServerOf, relayConnection } from './libsql-http.js';
import { dumpCommand, restoreCommand } from './tool-commands.js';

export const isLibsql = (engine: DatabaseEngine) => engine === DatabaseEngine.DATABASE_ENGINE_LIBSQL;

type ToolTarget = { engine: DatabaseEngine; database: string };

const commandOf = (target: ToolTarget, use: 'dump' | 'restore') =>
  use === 'dump' ? dumpCommand(target.engine, target.database) : restoreCommand(target.engine, target.database);

/** What the dump (`dump`) or restore tool of the target is called in messages; null when this agent has none. */
export const toolName = (target: ToolTarget, use: 'dump' | 'restore'): string | null =>
  isLibsql(target.engine) ? `libsql-server's HTTP API (${use === 'dump' ? 'GET /dump' : 'POST /v2/pipeline'})` : (commandOf(target, use)?.tool ?? null);

/**
 * Runs `use` with libsql-server's HTTP API in running container `containerId` (whose
 * variables are `env`), through relay container `relay`, removed after.
 */
export async function withLibsql<T>(containers: DatabaseContainers, containerId: string, env: readonly string[], relay: string, use: (http: LibsqlHttp) => Promise<T>): Promise<T> {
  const server = libsqlServerOf(env);
  if (typeof server === 'string') throw new Error(server);
  const relayId = await containers.startRelay(relay, containerId);
  const http = new LibsqlHttp(() => containers.run(relayId, relayConnection(server.port), true), server);
  try {
    return await use(http);
  } finally {
    // A cancelled restore's rollback goes through the relay too.
    await http.settled();
    await containers.remove(relayId).catch(() => undefined);
  }
}

/**
 * Runs `use` with the dump (`dump`) or restore tool of `engine` for `database` in running
 * container `containerId`; `relay` names the relay a libSQL command needs.
 */
export async function withTool<T>(
  containers: DatabaseContainers,
  target: ToolTarget,
  containerId: string,
  env: readonly string[],
  use: 'dump' | 'restore',
  relay: string,
  run: (tool: ToolRun) => Promise<T>,
): Promise<T> {
  if (isLibsql(target.engine)) {
    return withLibsql(containers, containerId, env, relay, async (http) => run(use === 'dump' ? await explainedDump(http, containers, containerId) : http.restore()));
  }
  return run(await containers.run(containerId, commandOf(target, use)!, use === 'restore'));
}

/** What libsql-server logs when it cuts a dump short (its answer says nothing). */
const DUMP_ERROR = /error creating dump: (.+)$/gm;
const ANSI = /\x1b\[[0-9;]*m/g;

/** libsql-server's dump, whose failure (its request's, its exit's, its output's error) names what the server logged about it. */
async function explainedDump(http: LibsqlHttp, containers: DatabaseContainers, containerId: string): Promise<ToolRun> {
  const since = Date.now();
  const explained = async (err: Error) => {
    const log = await containers.logTail(containerId, since).catch(() => '');
    const why = [...log.replace(ANSI, '').matchAll(DUMP_ERROR)].at(-1)?.[1]?.trim().slice(0, 300);
    return why ? new Error(`${err.message} (libsql-server logged: ${why})`) : err;
  };
  const dump = await http.dump().catch(async (err: Error) => Promise.reject(await explained(err)));
  const exited = dump.exited().catch(async (err: Error) => Promise.reject(await explained(err)));
  exited.catch(() => undefined);
  // The answer stream's own error would be the first failure its reader sees: it gets the reason instead.
  const output = new PassThrough();
  dump.output.on('error', () => void exited.catch((why: Error) => output.destroy(why)));
  dump.output.pipe(output);
  return { ...dump, output, exited: () => exited };
}
