import type { Contract } from './contract.js';
import { ai } from './ai/index.js';
import { application } from './application/index.js';
import { compose } from './compose/index.js';
import { cache } from './cache/index.js';
import { dbA } from './dbA/index.js';
import { dbB } from './dbB/index.js';
import { dbC } from './dbC/index.js';
import { dbD } from './dbD/index.js';
import { dbE } from './dbE/index.js';
import { backup } from './backup/index.js';
import { destination } from './destination/index.js';
import { domain } from './domain/index.js';
import { organization } from './organization/index.js';
import { environment } from './environment/index.js';
import { project } from './project/index.js';
import { forgeC } from './forgeC/index.js';
import { forgeB } from './forgeB/index.js';
import { forgeA } from './forgeA/index.js';
import { forgeD } from './forgeD/index.js';
import { gitProvider } from './gitProvider/index.js';
import { server } from './server/index.js';
import { sshKey } from './sshKey/index.js';
import { container } from './container/index.js';
import { security } from './security/index.js';
import { certificates } from './certificates/index.js';
import { billing } from './billing/index.js';
import { previewDeployment } from './previewDeployment/index.js';
import { cluster } from './cluster/index.js';
import { notification } from './notification/index.js';
import { settings } from './settings/index.js';
import { user } from './user/index.js';
import { deployment } from './deployment/index.js';
import { audit } from './audit/index.js';
import { command } from './command/index.js';
import { mounts } from './mounts/index.js';
import { volumeBackup } from './volumeBackup/index.js';

export * from './contract.js';
export * from './primitives.js';
export * from './input-schema.js';
export { LogQueries, type LogQuery } from './logs.js';
export * from './records.js';
export { BillingProductConfig } from './billing/record.js';
export { DeploymentRecord, DeploymentLog } from './deployment/record.js';
export { AuditEventRecord } from './audit/record.js';
export { CommandRecord, QueuedCommand } from './command/record.js';
export { ContainerMetricsPoint, HostMetricsPoint } from './user/metrics.js';

/** Every router of the API, by name; each maps operation names to contracts. */
export const contracts = {
  ai,
  application,
  compose,
  cache,
  dbA,
  dbB,
  dbC,
  dbD,
  dbE,
  backup,
  destination,
  domain,
  organization,
  environment,
  project,
  forgeC,
  forgeB,
  forgeA,
  forgeD,
  gitProvider,
  server,
  sshKey,
  container,
  security,
  certificates,
  billing,
  previewDeployment,
  cluster,
  notification,
  settings,
  user,
  deployment,
  command,
  audit,
  mounts,
  volumeBackup,
};

export type Contracts = typeof contracts;
export type RouterName = keyof Contracts;

/** All contracts in a flat list, in registry order. */
export const allContracts: Contract[] = Object.values(contracts).flatMap(
  (router) => Object.values(router) as Contract[],
);

/** Contracts by `<router>.<operation>`. */
export const contractsByName: ReadonlyMap<string, Contract> = new Map(
  allContracts.map((c) => [c.name, c]),
);
