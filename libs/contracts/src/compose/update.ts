import { z } from 'zod';
import { defineContract } from '../contract.js';
import {
  AppName,
  Branch,
  ComposeSourceType,
  ComposeType,
  NonEmpty,
  RequiredId,
  Status,
  TriggerType,
} from '../primitives.js';
import { ComposeRecord } from './record.js';

const text = z.string().nullable().optional();

export const update = defineContract({
  method: 'POST',
  summary: 'Change any settings of a compose stack',
  description:
    "Every field but `composeId` is optional; only the fields given are changed. Among them: " +
    '`appName` (AppName), `sourceType` (ComposeSourceType), `composeType` ' +
    "(ComposeType), `composePath` (at least 1 character: the compose file's path in the repository) " +
    "and `applicationStatus` (a Status value; it moves " +
    'the stack to that status). The other fields are those a user sets on a stack: its ' +
    'compose file and command, dotenv `env`, the source for each `sourceType` (forgeA ' +
    '`repository`/`owner`/`branch`/`forgeAId`/`triggerType`, forgeB/forgeC/forgeD fields as on ' +
    'applications, plain git `customGit*`), webhook `autoDeploy`, `watchPaths` globs, ' +
    '`randomize`/`suffix` (see randomizeCompose) and `isolatedDeployment`/' +
    '`isolatedDeploymentsVolume` (see isolatedDeployment). null clears a field.',
  input: z.object({
    composeId: RequiredId,
    name: NonEmpty.optional(),
    appName: AppName.optional(),
    sourceType: ComposeSourceType.optional(),
    composeType: ComposeType.optional(),
    composePath: NonEmpty.optional(),
    applicationStatus: Status.optional(),
    description: text,
    env: text,
    composeFile: z.string().optional(),
    command: text,
    repository: text,
    owner: text,
    branch: Branch.nullable().optional(),
    forgeAId: text,
    triggerType: TriggerType.optional(),
    forgeBId: text,
    forgeBRepository: text,
    forgeBOwner: text,
    forgeBBranch: Branch.nullable().optional(),
    forgeBProjectId: z.number().nullable().optional(),
    forgeBPathNamespace: text,
    forgeCId: text,
    forgeCRepository: text,
    forgeCRepositorySlug: text,
    forgeCOwner: text,
    forgeCBranch: Branch.nullable().optional(),
    forgeDId: text,
    forgeDRepository: text,
    forgeDOwner: text,
    forgeDBranch: Branch.nullable().optional(),
    customGitUrl: text,
    customGitBranch: Branch.nullable().optional(),
    customGitSSHKeyId: text,
    enableSubmodules: z.boolean().optional(),
    autoDeploy: z.boolean().nullable().optional(),
    watchPaths: z.array(z.string()).nullable().optional(),
    randomize: z.boolean().optional(),
    suffix: z.string().optional(),
    isolatedDeployment: z.boolean().optional(),
    isolatedDeploymentsVolume: z.boolean().optional(),
  }),
  output: ComposeRecord,
  example: {
    composeId: 'cmp_example',
    sourceType: 'git',
    customGitUrl: 'https://git.example.com/acme/monitoring.git',
    customGitBranch: 'main',
    composePath: './docker-compose.yml',
    autoDeploy: true,
    watchPaths: ['docker-compose.yml', 'config/**'],
    isolatedDeployment: true,
  },
});
