import { randomBytes } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { ComposeStack } from '@skiff/db';
import { type ComposeDeploySettings, ComposeError, composeServiceMounts, composeServiceNames, parseCompose, randomizedName } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { ComposeService } from './compose.js';
import { commandArgs, composePathOf, convertOrRefuse, deploySettings, noFile, refuseForgeSource, routedServices } from './compose-settings.js';
import { type GitFileOptions, readGitFile } from './compose-git.js';
import type { ServiceDeps } from '../shared/deps.js';
import { plainGitSource } from '../deployments/git-sources.js';
import { forgeGitSource, isForgeSource } from '../deployments/forge-sources.js';
import type { ForgeRepositories } from '../forges/forge-repositories.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';

type ConvertedCompose = OutputOf<Contracts['compose']['getConvertedCompose']>;

/**
 * The compose file as a stack deploys it: `getConvertedCompose`, `randomizeCompose` and
 * `isolatedDeployment` (which turn their setting on and show the result), `loadServices`,
 * `loadMountsByService`, `getDefaultCommand`, and `fetchSourceType`, which stores the file of
 * a git source (fetched on the control plane, compose-git.ts).
 */
export class ComposeFiles {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly stacks: ComposeService,
    private readonly options: { git?: GitFileOptions; forges?: ForgeRepositories } = {},
  ) {}

  private get db() {
    return this.deps.db;
  }

  async getConvertedCompose(p: Principal, composeId: string): Promise<ConvertedCompose> {
    const { row } = await this.access.find(p, 'compose', composeId);
    return this.converted(row);
  }

  /** Turns `randomize` on (with the stack's suffix, or a new random one) and answers the file as it will now deploy. */
  async randomizeCompose(p: Principal, composeId: string): Promise<ConvertedCompose> {
    const { row } = await this.access.find(p, 'compose', composeId);
    const changes = { randomize: true, suffix: row.suffix || randomBytes(4).toString('hex') };
    const converted = await this.converted({ ...row, ...changes });
    await this.stacks.set(row, changes);
    return converted;
  }

  /** Turns `isolatedDeployment` on and answers the file as it will now deploy. */
  async isolatedDeployment(p: Principal, composeId: string): Promise<ConvertedCompose> {
    const { row } = await this.access.find(p, 'compose', composeId);
    const converted = await this.converted({ ...row, isolatedDeployment: true });
    await this.stacks.set(row, { isolatedDeployment: true });
    return converted;
  }

  /** The service names of the stored file (`fetch`: fetched from the source and stored first). */
  async loadServices(p: Principal, composeId: string, type: 'fetch' | 'cache' = 'cache'): Promise<string[]> {
    const located = await this.access.find(p, 'compose', composeId);
    const row = type === 'fetch' ? await this.fetch(located) : located.row;
    if (row.composeFile.trim() === '') throw noFile(row);
    try {
      return composeServiceNames(row.composeFile);
    } catch (err) {
      if (err instanceof ComposeError) throw Invalid('composeFile', err.message);
      throw err;
    }
  }

  /** What the service mounts in the file as deployed; its stored or its randomized name. */
  async loadMountsByService(p: Principal, composeId: string, serviceName: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    const settings = deploySettings(row, await routedServices(this.db, row.id));
    const deployed = convertOrRefuse(row, settings);
    for (const name of deployedCandidates(serviceName, settings)) {
      const mounts = composeServiceMounts(deployed, name, row.appName);
      if (mounts) return mounts;
    }
    throw Invalid('serviceName', `the compose file defines no service ${JSON.stringify(serviceName)}`);
  }

  async getDefaultCommand(p: Principal, composeId: string) {
    const { row } = await this.access.find(p, 'compose', composeId);
    const custom = !!row.command && row.command.trim() !== '';
    const argv = commandArgs(row.composeType, custom ? row.command : null);
    return { command: argv.map(displayArg).join(' '), argv, custom };
  }

  /** Stores the compose file of the stack's source (nothing to fetch for raw stacks) and answers the stack. */
  async fetchSourceType(p: Principal, composeId: string) {
    const located = await this.access.find(p, 'compose', composeId);
    return this.stacks.record(await this.fetch(located));
  }

  private async converted(row: ComposeStack): Promise<ConvertedCompose> {
    const routed = await routedServices(this.db, row.id);
    const settings = deploySettings(row, routed);
    return {
      composeFile: convertOrRefuse(row, settings),
      suffix: settings.randomize ? settings.suffix : null,
      isolatedNetwork: settings.isolatedDeployment ? row.appName : null,
      routedServices: [...new Set(routed.map((name) => deployedName(name, settings)))],
    };
  }

  /** The stack with the file of its source stored (a raw stack as it is). A file that is not compose is refused unstored. */
  private async fetch(located: Located<'compose'>): Promise<ComposeStack> {
    const { row } = located;
    if (row.sourceType === 'raw') return row;
    if (row.sourceType !== 'git' && !isForgeSource(row.sourceType)) refuseForgeSource(row.sourceType);
    const path = composePathOf(row);
    const source = isForgeSource(row.sourceType)
      ? await forgeGitSource(this.deps, this.options.forges, located, 'compose')
      : await plainGitSource(this.deps, located, 'compose.update');
    const text = await readGitFile(source.kind.value, path, this.options.git);
    try {
      parseCompose(text);
    } catch (err) {
      if (err instanceof ComposeError) throw Invalid('composePath', `${path} is not a compose file: ${err.message}`);
      throw err;
    }
    return this.db.updateTable('composeStacks').set({ composeFile: text }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
  }
}

/** A service's name in the deployed file (randomizedName keeps a name that already carries the suffix). */
function deployedName(name: string, settings: ComposeDeploySettings): string {
  if (!settings.randomize || !settings.suffix) return name;
  try {
    return randomizedName(name, settings.suffix);
  } catch {
    return name;
  }
}

const deployedCandidates = (name: string, settings: ComposeDeploySettings) => [...new Set([name, deployedName(name, settings)])];

/** An argument as a user would type it again: quoted when a shell would split or expand it. */
function displayArg(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}
