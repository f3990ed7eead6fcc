import { commandKindToJSON } from '@skiff/proto';
import { applyProxyConfig } from './apply-proxy-config.js';
import { cacheDeploy } from './cache-deploy.js';
import { databaseDeploy } from './database-deploy.js';
import { databaseDump } from './database-dump.js';
import { databaseVerify } from './database-verify.js';
import { volumeBackup } from './volume-backup.js';
import { deployApplication } from './deploy-application.js';
import { deployCompose } from './deploy-compose.js';
import type { CommandKindDefinition } from './kind.js';
import { parseWorkloadKey } from './kind.js';
import { workloadLifecycle } from './workload-lifecycle.js';

/**
 * The command kinds the control plane sends agents: one definition per file beside this one.
 * A new kind is one file and one line here (docs/architecture.md, "How to add a command kind").
 */
export const COMMAND_KINDS: readonly CommandKindDefinition[] = [deployApplication, deployCompose, workloadLifecycle, cacheDeploy, databaseDeploy, databaseDump, databaseVerify, volumeBackup, applyProxyConfig];

/** Definitions by `<CommandKind name> <workload type>`; a pair claimed twice is a mistake caught at start. */
const REGISTRY = new Map<string, CommandKindDefinition>();
for (const definition of COMMAND_KINDS) {
  for (const kind of definition.kinds) {
    for (const workload of definition.workloads) {
      const key = `${commandKindToJSON(kind)} ${workload}`;
      const taken = REGISTRY.get(key);
      if (taken) throw new Error(`command kinds ${taken.name} and ${definition.name} both claim ${key}`);
      REGISTRY.set(key, definition);
    }
  }
}

/** The definition of a command row (its `kind` and `workloadKey`), if it is a known kind. */
export function commandKindOf(command: { kind: string; workloadKey: string }): CommandKindDefinition | undefined {
  const workload = parseWorkloadKey(command.workloadKey);
  return workload ? REGISTRY.get(`${command.kind} ${workload.type}`) : undefined;
}

export { type CommandKindDefinition, type CommandResultContext, type WorkloadType, workloadKey } from './kind.js';
