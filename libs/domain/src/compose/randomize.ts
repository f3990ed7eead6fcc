/**
 * `randomizeCompose(file, suffix)`: lets several copies of one compose file run side by side
 * (REFERENCE.md, "Compose randomize"). With suffix S:
 *
 * - every service key becomes `<name>-S`, and every reference follows: `depends_on` (list or
 *   map), `links` (`db` and `db:alias`; the alias is the linking service's own name for it and
 *   stays), `volumes_from` (`web`, `web:ro`; `container:x` names a container outside the stack
 *   and stays), `extends` (string or `{service}`; an `extends` with a `file` names a service of
 *   another file and stays), `network_mode` / `ipc` / `pid` `service:x`, and
 *   `build.additional_contexts` `service:x`;
 * - `container_name` gets `-S`;
 * - top-level networks, volumes, configs and secrets get `-S`, at the top level and where
 *   services use them (service `networks` as list or map, with their aliases and addresses
 *   kept; short volumes keep their target and mode, `data:/x:ro` → `data-S:/x:ro`; long
 *   volumes `{type: volume, source}`; secrets and configs short and long; `build.secrets`).
 *   A resource with its own `name:` gets `-S` there too, so copies never share it;
 * - left alone: bind mounts (sources starting with `.`, `/`, `~` or `$`), anonymous volumes,
 *   network aliases, `external` resources (their name is fixed outside the file: a renamed
 *   key would point at a network or volume that does not exist), the key `default` of
 *   `networks` (it configures Compose's implicit network; renamed it would be another
 *   network; its `name:`, if any, does get `-S`) and the platform network (`skiff-network`,
 *   under any key).
 *
 * A reference is only rewritten when it names something the file defines. Applying it again
 * with the same suffix changes nothing: a name already ending in `-S` is kept. A file where
 * two names would become the same (`db` and `db-S` both defined) is refused.
 *
 * Note: service names are also host names on the stack's networks, so a value such as
 * `DATABASE_URL=postgres://db:5432` must name `db-S` once the stack is randomized.
 */
import { applySuffix, SUFFIX_PATTERN, withSuffix } from './rename.js';
import { type ComposeFile, type ComposeInput, composeFileOf } from './compose-file.js';
import { ComposeError } from './yaml-nodes.js';

export interface RandomizeOptions {
  /**
   * Suffixes other steps of the same pipeline add after this one (the volume suffix of
   * isolation), so running the whole pipeline on its own output adds nothing either.
   */
  otherSuffixes?: readonly string[];
}

export function randomizeCompose(input: ComposeInput, suffix: string, options: RandomizeOptions = {}): ComposeFile {
  checkSuffix(suffix);
  const file = composeFileOf(input).copy();
  applySuffix(file.document, {
    kinds: new Set(['services', 'networks', 'volumes', 'configs', 'secrets']),
    suffix,
    otherSuffixes: options.otherSuffixes ?? [],
    containerNames: true,
    operation: 'randomizing',
  });
  return file;
}

/** The name a service (or resource) gets once randomized with `suffix`. */
export function randomizedName(name: string, suffix: string): string {
  checkSuffix(suffix);
  return withSuffix(name, suffix);
}

function checkSuffix(suffix: string): void {
  if (!SUFFIX_PATTERN.test(suffix)) {
    throw new ComposeError('the suffix must be 1 to 32 letters, digits, underscores or hyphens');
  }
}
