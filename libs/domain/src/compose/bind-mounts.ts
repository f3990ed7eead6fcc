/**
 * Where a deployed stack's relative bind mounts live, so a redeploy never wipes what services
 * wrote there (issue 6, "Data safety").
 *
 * On a server a stack's directory holds `code/` (the source, replaced as a whole on every
 * deploy) and `files/` (kept across deploys). Compose resolves a relative bind mount
 * (`./data:/data`, or `type: bind` with `source: ./data`) against the compose file's
 * directory, which is inside `code/`: left as it is, the data would go with the next deploy.
 *
 * `keepBindMounts(file, places)` rewrites every relative bind-mount source to an absolute
 * path:
 * - a path inside the source (`./data`, `./conf/nginx.conf`, `.`) goes to the same relative
 *   path under `files/` (`<files>/data`). The agent then copies what the source has at that
 *   path over it before the stack starts, and creates what the source lacks (as a directory).
 *   So a file or folder shipped with the source is refreshed by each deploy, and whatever a
 *   service wrote beside it stays; nothing under `files/` is ever deleted by a deploy.
 * - a path that leaves the source (`../files/db`, the layout some platforms document) becomes
 *   the absolute path it names; under `files/` it is created when missing.
 * Absolute paths, `~` and `$VAR` sources (interpolated later by Compose), named and anonymous
 * volumes are left alone. Idempotent: the sources it writes are absolute.
 */
import { posix } from 'node:path';
import { isMap, isSeq, type YAMLMap, type YAMLSeq } from 'yaml';
import { type ComposeFile, type ComposeInput, composeFileOf, editableServices } from './compose-file.js';
import { ComposeError, editValue, isEmptyScalar, lookup, materialize, ownPair, replaceScalar, resolveNode, scalarText, type YamlNode } from './yaml-nodes.js';

export interface BindMountPlaces {
  /** Absolute directory of the source on the server (`<stack>/code`). */
  sourceDir: string;
  /** Absolute directory of the compose file (inside `sourceDir`): relative sources start there. */
  composeDir: string;
  /** Absolute directory kept across deploys (`<stack>/files`). */
  keptDir: string;
}

export interface KeptMount {
  /** The mounted path relative to the source's root (`''`: the root itself); null when it is outside the source. */
  sourcePath: string | null;
  /** Where it is mounted from now: inside `keptDir`. */
  keptPath: string;
}

export function keepBindMounts(input: ComposeInput, places: BindMountPlaces): { file: ComposeFile; kept: KeptMount[] } {
  for (const [name, dir] of Object.entries(places)) {
    if (!posix.isAbsolute(dir)) throw new ComposeError(`${name} must be an absolute path`);
  }
  if (!inside(places.sourceDir, places.composeDir)) throw new ComposeError('the compose file must be inside the source');
  const file = composeFileOf(input).copy();
  const document = file.document;
  const kept = new Map<string, KeptMount>();
  const relocate = (source: string): string | null => {
    if (!isRelative(source)) return null;
    const absolute = posix.resolve(places.composeDir, source);
    if (inside(places.sourceDir, absolute)) {
      const sourcePath = posix.relative(places.sourceDir, absolute);
      const keptPath = posix.join(places.keptDir, sourcePath);
      kept.set(keptPath, { sourcePath, keptPath });
      return keptPath;
    }
    if (inside(places.keptDir, absolute) && !kept.has(absolute)) kept.set(absolute, { sourcePath: null, keptPath: absolute });
    return absolute;
  };
  for (const { name, definition } of editableServices(document)) {
    if (lookup(document, definition, 'volumes') === undefined) continue;
    editValue(document, definition, 'volumes', (value) => {
      const list = resolveNode(document, value);
      if (list === null || isEmptyScalar(list)) return null;
      if (!isSeq(list)) throw new ComposeError(`the volumes of service "${name}" must be a list`);
      const seq = (list === value ? list : materialize(document, list)) as YAMLSeq;
      let changed = list !== value;
      seq.items = seq.items.map((item) => {
        const next = relocateEntry(document, item as YamlNode, relocate);
        if (next === null) return item;
        changed = true;
        return next;
      });
      return changed ? seq : null;
    });
  }
  return { file, kept: [...kept.values()] };
}

/** One `volumes` entry with a relative bind source rewritten, or null when it stays as it is. */
function relocateEntry(document: ComposeFile['document'], item: YamlNode, relocate: (source: string) => string | null): YamlNode | null {
  const text = scalarText(document, item);
  if (text !== null) {
    // Short syntax: only a source starting with `.` is a path (`data:/x` is a named volume).
    const colon = text.indexOf(':');
    if (colon <= 0 || !text.startsWith('.')) return null;
    const next = relocate(text.slice(0, colon));
    return next === null ? null : replaceScalar(resolveNode(document, item), `${next}${text.slice(colon)}`);
  }
  const entry = resolveNode(document, item);
  if (!isMap(entry) || scalarText(document, lookup(document, entry, 'type')) !== 'bind') return null;
  const source = scalarText(document, lookup(document, entry, 'source'));
  const next = source === null ? null : relocate(source);
  if (next === null) return null;
  const copy = (entry === item && ownPair(document, entry, 'source') ? entry : materialize(document, entry)) as YAMLMap;
  editValue(document, copy, 'source', (value) => replaceScalar(value, next));
  return copy;
}

/** Relative as Compose reads a bind source: not absolute, not `~…` (home) and not `$…` (interpolated). */
function isRelative(source: string): boolean {
  return source !== '' && !source.startsWith('/') && !source.startsWith('~') && !source.startsWith('$');
}

function inside(root: string, path: string): boolean {
  const rel = posix.relative(root, path);
  return rel === '' || (!rel.startsWith('../') && rel !== '..' && !posix.isAbsolute(rel));
}
