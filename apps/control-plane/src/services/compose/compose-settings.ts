import type { ComposeStack, Db } from '@skiff/db';
import { ComposeCommandError, type ComposeDeploySettings, ComposeError, composeCommandArgs, convertedCompose } from '@skiff/domain';
import { Invalid } from '../../errors.js';

/**
 * A stack's deploy settings read from its record, each refusal naming the field: the conversion
 * settings and routed services, the converted file, the compose file's path, the custom command.
 * Shared by the stack's records (compose.ts), its files (compose-files.ts) and its deploys
 * (compose-deploy.ts).
 */

/** The compose file's path when the stack names none. */
export const DEFAULT_COMPOSE_PATH = 'docker-compose.yml';

/**
 * The services the stack's domains route to, as the domains name them (before or after
 * randomizing: convertedCompose understands both), sorted. Every domain counts, enabled or
 * not, so enabling one later needs no redeploy.
 */
export async function routedServices(db: Db, composeId: string): Promise<string[]> {
  const rows = await db.selectFrom('domains').select('serviceName').distinct().where('composeId', '=', composeId).execute();
  return rows.flatMap((r) => (r.serviceName ? [r.serviceName] : [])).sort();
}

/** The stack's conversion settings; randomize without a suffix is bad input naming `suffix`. */
export function deploySettings(row: ComposeStack, routed: readonly string[]): ComposeDeploySettings {
  if (row.randomize && !row.suffix) {
    throw Invalid('suffix', 'randomize is on but the stack has no suffix (set one with compose.update, or call compose.randomizeCompose)');
  }
  return {
    appName: row.appName,
    randomize: row.randomize ?? false,
    suffix: row.suffix || null,
    isolatedDeployment: row.isolatedDeployment ?? false,
    isolatedDeploymentsVolume: row.isolatedDeploymentsVolume ?? false,
    routedServices: routed,
  };
}

/** The stored file converted with the settings; an empty or refused file is bad input naming the field it is about. */
export function convertOrRefuse(row: ComposeStack, settings: ComposeDeploySettings): string {
  if (row.composeFile.trim() === '') throw noFile(row);
  try {
    return convertedCompose(row.composeFile, settings);
  } catch (err) {
    if (err instanceof ComposeError) throw Invalid(/^appName\b/.test(err.message) ? 'appName' : 'composeFile', err.message);
    throw err;
  }
}

/** The compose file's path in the source: relative, `/`-separated, without `./`; bad input naming `composePath` otherwise. */
export function composePathOf(row: Pick<ComposeStack, 'composePath'>): string {
  const path = (row.composePath ?? '').trim().replace(/\\/g, '/').replace(/\/{2,}/g, '/').replace(/^(?:\.\/)+/, '');
  if (path.startsWith('/')) throw Invalid('composePath', 'must be relative to the repository root');
  if (path.split('/').includes('..')) throw Invalid('composePath', 'must stay inside the source (no ..)');
  return path === '' || path === '.' ? DEFAULT_COMPOSE_PATH : path;
}

/** The stack's custom command as the compose program's arguments (empty: the default of its type); a refused one names `command`. */
export function customCommandArgs(row: Pick<ComposeStack, 'composeType' | 'command'>): string[] {
  if (!row.command || row.command.trim() === '') return [];
  return commandArgs(row.composeType, row.command);
}

/** The arguments of the command (`null`: the type's default); a refused command is bad input naming `command`. */
export function commandArgs(composeType: string, command: string | null): string[] {
  try {
    return composeCommandArgs(composeType, command);
  } catch (err) {
    if (err instanceof ComposeCommandError) throw Invalid('command', err.message);
    throw err;
  }
}

/** A source type a stack cannot be fetched from. */
export function refuseForgeSource(sourceType: string): never {
  throw Invalid('sourceType', `a compose stack cannot be fetched from sourceType ${sourceType}`);
}

/** The refusal of a stack without a compose file, saying where the file comes from. */
export const noFile = (row: ComposeStack) =>
  Invalid(
    'composeFile',
    row.sourceType === 'raw'
      ? 'the stack has no compose file (compose.update composeFile)'
      : 'no compose file fetched from the source yet (compose.fetchSourceType)',
  );
