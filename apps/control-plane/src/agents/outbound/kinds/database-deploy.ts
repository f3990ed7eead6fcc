import type { DatabaseService } from '@skiff/db';
import { type WorkloadSpecInput, wireServerId } from '@skiff/domain';
import { type Command, CommandKind, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { DEPLOY_DEADLINE_MS, deployPayload } from './deploy-application.js';
import { type CommandResultContext, defineCommandKind, succeeded, workloadKey } from './kind.js';

/**
 * The deploys of database services (dbA..dbE), as cache-deploy.ts is for caches: a
 * DeployApplication command of the agent's cache workload kind (a Swarm service with a data
 * volume), keyed `database:<id>`; `applicationStatus` is `running` when queued, `done` after
 * a deploy that succeeded, `error` after any other end.
 */

export const DATABASE_DEPLOY_DEADLINE_MS = DEPLOY_DEADLINE_MS;

export const databaseKey = (id: string) => workloadKey('database', id);

export interface DatabaseDeployInput {
  commandId: string;
  rolloutId: string;
  database: Pick<DatabaseService, 'id' | 'appName' | 'serverId'>;
  spec: WorkloadSpecInput;
  /** The resolved variables with the engine's credentials: secrets. */
  env: Map<string, string>;
  createdAt: Date;
  deadline: Date;
}

export function databaseDeployCommand(input: DatabaseDeployInput): Command {
  return {
    commandId: input.commandId,
    serverId: wireServerId(input.database.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: databaseKey(input.database.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployApplication',
      value: deployPayload(
        input.rolloutId,
        { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: input.database.id, appName: input.database.appName },
        input.spec,
        input.env,
      ),
    },
  };
}

async function applyDatabaseDeployResult({ tx, command, status }: CommandResultContext): Promise<void> {
  const id = command.workloadKey.slice(databaseKey('').length);
  await tx.updateTable('databaseServices').set({ applicationStatus: succeeded(status) ? 'done' : 'error' }).where('id', '=', id).execute();
}

export const databaseDeploy = defineCommandKind({
  name: 'database deploy',
  kinds: [CommandKind.COMMAND_KIND_DEPLOY_APPLICATION],
  workloads: ['database'],
  deploys: true,
  unrecordedEvents: 'set aside',
  build: databaseDeployCommand,
  applyResult: applyDatabaseDeployResult,
});
