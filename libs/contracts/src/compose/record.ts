import { z } from 'zod';
import { WatchPaths } from '../application/cluster.js';
import { ComposeSourceType, ComposeType, Status, Timestamp, TriggerType } from '../primitives.js';

const text = z.string().nullable();
const flag = z.boolean().nullable();

/**
 * A compose stack as responses show it: its identity, where its compose file comes from
 * (`sourceType` and the matching source fields; the others stay null), the compose file
 * itself for `raw` stacks, and its deploy settings. `env` and the webhook `refreshToken` are
 * encrypted at rest and returned to callers who may see the stack.
 */
export const ComposeRecord = z.object({
  composeId: z.string(),
  environmentId: z.string(),
  serverId: text.describe('the server it runs on; null: the platform host'),
  name: z.string(),
  appName: z.string().describe('the Docker project/stack name; unique on its server across every kind of service'),
  description: text,
  applicationStatus: Status,
  sourceType: ComposeSourceType,
  composeType: ComposeType.describe('`container-compose` (docker compose) or `stack` (docker stack deploy on the Swarm)'),
  composeFile: z.string().describe('the compose YAML (of a `raw` stack, or as last fetched from the source)'),
  composePath: text.describe("the compose file's path in the repository"),
  command: text.describe('a custom deploy command; null: the default one'),
  env: z.string().describe('dotenv text; `${{project.X}}`, `${{environment.X}}`, `${{X}}` are resolved at deploy time'),
  repository: text.describe('forgeA repository'),
  owner: text.describe('forgeA owner'),
  branch: text.describe('forgeA branch'),
  forgeAId: text,
  triggerType: TriggerType.nullable().describe('forgeA: deploy on push or on tag'),
  forgeBId: text,
  forgeBRepository: text,
  forgeBOwner: text,
  forgeBBranch: text,
  forgeBProjectId: z.number().nullable(),
  forgeBPathNamespace: text,
  forgeCId: text,
  forgeCRepository: text,
  forgeCRepositorySlug: text,
  forgeCOwner: text,
  forgeCBranch: text,
  forgeDId: text,
  forgeDRepository: text,
  forgeDOwner: text,
  forgeDBranch: text,
  customGitUrl: text,
  customGitBranch: text,
  customGitSSHKeyId: text.describe('the SSH key used to clone `customGitUrl`'),
  enableSubmodules: flag,
  autoDeploy: flag.describe('the deploy webhook deploys pushes'),
  watchPaths: WatchPaths.nullable(),
  refreshToken: text.describe('the deploy-webhook token; renewed with compose.refreshToken'),
  randomize: flag.describe('suffix names on deploy (see compose.randomizeCompose)'),
  suffix: text,
  isolatedDeployment: flag.describe('the stack gets its own network (see compose.isolatedDeployment)'),
  isolatedDeploymentsVolume: flag.describe('isolated deployments also suffix volumes'),
  createdAt: Timestamp,
});

/** What `compose.delete` answers: the deleted record and whether its volumes go too. */
export const DeletedCompose = ComposeRecord.extend({
  deleteVolumes: z
    .boolean()
    .describe('whether the named volumes are removed with the workload'),
});
