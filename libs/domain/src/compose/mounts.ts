/**
 * `composeServiceMounts(file, service, projectName)`: what one service of a compose file mounts
 * (`compose.loadMountsByService`), read from the file as it is deployed.
 *
 * - `volumes` in the short syntax (`source:target[:mode]`, or a bare `target` for an anonymous
 *   volume) and the long syntax (`{type, source, target, read_only}`); a short source starting
 *   with `.`, `/`, `~` or `$` is a bind mount, any other a named volume (as randomize reads them);
 *   `ro` among the short mode's comma-separated flags is read-only;
 * - `tmpfs` (a path or a list of paths, `path:options` kept as the target's path).
 * - A named volume's Docker name: the top-level volume's own `name:`; an external volume's
 *   name (`name:` or the legacy `external: {name}`) or its key; else `<project>_<key>`, the
 *   project being the appName as Compose normalises it (lower case, only `a-z 0-9 _ -`).
 *   Compose's `${VAR}` interpolation is not applied: names are shown as written.
 *
 * Null when the file defines no such service.
 */
import { type ComposeInput, composeFileOf } from './compose-file.js';
import { isTrueText } from './yaml-nodes.js';

export interface ComposeServiceMount {
  type: 'volume' | 'bind' | 'tmpfs' | 'npipe' | 'image' | 'cluster';
  /** The named volume or host path as written; null for anonymous volumes and tmpfs. */
  source: string | null;
  /** A named volume's Docker name; null for everything else. */
  volumeName: string | null;
  target: string;
  readOnly: boolean;
}

type Plain = Record<string, unknown>;

const LONG_TYPES = new Set(['volume', 'bind', 'tmpfs', 'npipe', 'image', 'cluster']);

export function composeServiceMounts(input: ComposeInput, service: string, projectName: string): ComposeServiceMount[] | null {
  const root = composeFileOf(input).document.toJS({ maxAliasCount: -1 }) as Plain;
  const services = asMap(root.services);
  const definition = services && Object.hasOwn(services, service) ? (asMap(services[service]) ?? {}) : null;
  if (!definition) return null;
  const volumes = asMap(root.volumes) ?? {};
  const project = composeProjectName(projectName);
  const named = (key: string) => dockerVolumeName(key, asMap(volumes[key]), project);

  const mounts: ComposeServiceMount[] = [];
  for (const entry of asList(definition.volumes)) {
    const mount = typeof entry === 'string' ? shortVolume(entry, named) : longVolume(asMap(entry), named);
    if (mount) mounts.push(mount);
  }
  const tmpfs = definition.tmpfs;
  for (const entry of typeof tmpfs === 'string' ? [tmpfs] : asList(tmpfs)) {
    if (typeof entry === 'string' && entry !== '') {
      mounts.push({ type: 'tmpfs', source: null, volumeName: null, target: entry.split(':')[0]!, readOnly: false });
    }
  }
  return mounts;
}

/** The project name Compose derives from a name: lower case, only `a-z 0-9 _ -`. */
export function composeProjectName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_-]/g, '');
}

const isBindSource = (source: string) => /^[./~$]/.test(source);

function shortVolume(spec: string, named: (key: string) => string): ComposeServiceMount | null {
  const parts = spec.split(':');
  if (parts.length === 1) return spec === '' ? null : { type: 'volume', source: null, volumeName: null, target: spec, readOnly: false };
  const [source, target, mode] = parts as [string, string, string | undefined];
  const readOnly = (mode ?? '').split(',').includes('ro');
  if (isBindSource(source)) return { type: 'bind', source, volumeName: null, target, readOnly };
  return { type: 'volume', source, volumeName: named(source), target, readOnly };
}

function longVolume(spec: Plain | null, named: (key: string) => string): ComposeServiceMount | null {
  if (!spec || typeof spec.target !== 'string') return null;
  const type = typeof spec.type === 'string' && LONG_TYPES.has(spec.type) ? (spec.type as ComposeServiceMount['type']) : 'volume';
  const source = typeof spec.source === 'string' && spec.source !== '' ? spec.source : null;
  const readOnly = typeof spec.read_only === 'string' ? isTrueText(spec.read_only) : spec.read_only === true;
  const volumeName = type === 'volume' && source !== null ? named(source) : null;
  return { type, source: type === 'tmpfs' ? null : source, volumeName, target: spec.target, readOnly };
}

function dockerVolumeName(key: string, definition: Plain | null, project: string): string {
  const own = definition && typeof definition.name === 'string' ? definition.name : null;
  const external = definition?.external;
  if (external !== undefined && external !== null) {
    const legacy = asMap(external);
    if (legacy || (typeof external === 'string' && isTrueText(external)) || external === true) {
      return own ?? (legacy && typeof legacy.name === 'string' ? legacy.name : key);
    }
  }
  return own ?? `${project}_${key}`;
}

function asMap(value: unknown): Plain | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Plain) : null;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
