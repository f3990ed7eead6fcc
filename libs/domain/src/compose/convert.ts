/**
 * `convertedCompose`: the compose file exactly as Skiff deploys it (what
 * `compose.getConvertedCompose` shows), from the stored file and the stack's settings.
 *
 * Fixed order:
 * 1. parse and check the stored text (`parseCompose`);
 * 2. `randomize` on: `randomizeCompose` with the stack's `suffix` (randomize on without a
 *    suffix is refused: there would be nothing to add);
 * 3. `isolatedDeployment` on: `isolateCompose` with the stack's `appName`, volumes suffixed
 *    when `isolatedDeploymentsVolume` is on (that flag alone, without isolation, does nothing);
 * 4. `routedServices` (the services the stack's domains name, as stored: before or after
 *    randomizing, both are understood): they join the platform network with their alias
 *    (`attachPlatformNetwork`), isolated or not, since the proxy reaches nothing else;
 * 5. written back as text (`serializeCompose`).
 *
 * Every step is idempotent, and each one knows the suffixes of the others, so converting the
 * converted file again gives the same file (a redeploy never renames a volume twice). The
 * `.env` file beside it comes from `composeDotenv` (env-file.ts).
 */
import { composeFileOf, type ComposeInput, composeServiceNames, serializeCompose } from './compose-file.js';
import { attachPlatformNetwork, isolateCompose } from './isolate.js';
import { randomizeCompose, randomizedName } from './randomize.js';
import { ComposeError } from './yaml-nodes.js';

/** The stack's deploy settings, as the compose record stores them. */
export interface ComposeDeploySettings {
  appName: string;
  randomize: boolean;
  suffix: string | null;
  isolatedDeployment: boolean;
  isolatedDeploymentsVolume: boolean;
  /** Service names the stack's domains route to; empty or absent: none. */
  routedServices?: readonly string[];
}

export function convertedCompose(compose: ComposeInput, settings: ComposeDeploySettings): string {
  let file = composeFileOf(compose);
  const suffix = settings.randomize ? settings.suffix : null;
  if (settings.randomize && !suffix) throw new ComposeError('randomize is on but the stack has no suffix');
  const volumeSuffix = settings.isolatedDeployment && settings.isolatedDeploymentsVolume ? settings.appName : null;
  if (suffix) file = randomizeCompose(file, suffix, { otherSuffixes: volumeSuffix ? [volumeSuffix] : [] });
  if (settings.isolatedDeployment) {
    file = isolateCompose(file, settings.appName, {
      suffixVolumes: volumeSuffix !== null,
      otherSuffixes: suffix ? [suffix] : [],
    });
  }
  const routed = routedNames(composeServiceNames(file), settings.routedServices ?? [], suffix);
  if (routed.length > 0) file = attachPlatformNetwork(file, settings.appName, routed);
  return serializeCompose(file);
}

/** The deployed names of the routed services (a stored name may predate randomizing). */
function routedNames(deployed: string[], routed: readonly string[], suffix: string | null): string[] {
  const names = new Set<string>();
  for (const name of routed) {
    const candidate = suffix && !deployed.includes(name) ? randomizedName(name, suffix) : name;
    if (!deployed.includes(candidate)) throw new ComposeError(`a domain routes to service "${name}", which the compose file does not define`);
    names.add(candidate);
  }
  return [...names];
}
