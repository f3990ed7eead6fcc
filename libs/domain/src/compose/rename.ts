/**
 * Renaming services and top-level resources of a compose document, with every reference to
 * them following. Shared by `randomizeCompose` (everything) and `isolateCompose` (volumes).
 *
 * A reference is only rewritten when it names something the file defines and renames; a
 * name the file does not define (an undefined volume, the implicit `default` network, a
 * container outside the stack) is left as written.
 */
import { type Document, isMap, isScalar, isSeq, type YAMLMap, type YAMLSeq } from 'yaml';
import { PLATFORM_NETWORK } from '../swarm-spec.js';
import { editableServices, type ResourceKind, topLevelMap } from './compose-file.js';
import {
  ComposeError,
  editValue,
  entriesOf,
  isTrueText,
  keyText,
  lookup,
  materialize,
  flattenMerges,
  replaceScalar,
  resolveNode,
  scalarText,
  type YamlNode,
} from './yaml-nodes.js';

/** Old name → new name, per kind. */
export interface Renames {
  services: Map<string, string>;
  networks: Map<string, string>;
  volumes: Map<string, string>;
  configs: Map<string, string>;
  secrets: Map<string, string>;
}

export const SUFFIX_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * `name-suffix`, or `name` unchanged when it already ends with `-suffix`, possibly followed by
 * suffixes of the other steps of the same pipeline (`data-S-app` already carries `S` when
 * `app` is another step's suffix). That makes each step idempotent on its own and on the
 * output of the whole pipeline.
 */
export function withSuffix(name: string, suffix: string, otherSuffixes: readonly string[] = []): string {
  return carriesSuffix(name, suffix, otherSuffixes) ? name : `${name}-${suffix}`;
}

function carriesSuffix(name: string, suffix: string, others: readonly string[]): boolean {
  let rest = name;
  for (let guard = 0; guard <= others.length; guard += 1) {
    if (rest.endsWith(`-${suffix}`)) return true;
    const other = others.find((o) => o !== suffix && rest.endsWith(`-${o}`) && rest.length > o.length + 1);
    if (!other) return false;
    rest = rest.slice(0, -(other.length + 1));
  }
  return false;
}

export interface RenamePlan {
  kinds: ReadonlySet<'services' | ResourceKind>;
  suffix: string;
  otherSuffixes: readonly string[];
  /** Also suffix `container_name` (randomize does; the volume suffix of isolation does not). */
  containerNames: boolean;
  /** What the error messages call the operation. */
  operation: string;
}

/** Renames the planned kinds at the top level and in every service, in place. */
export function applySuffix(document: Document, plan: RenamePlan): void {
  const renames: Renames = {
    services: new Map(),
    networks: new Map(),
    volumes: new Map(),
    configs: new Map(),
    secrets: new Map(),
  };
  const rename = (name: string) => withSuffix(name, plan.suffix, plan.otherSuffixes);
  if (plan.kinds.has('services')) renameServiceKeys(document, renames.services, rename, plan.operation);
  for (const kind of ['networks', 'volumes', 'configs', 'secrets'] as const) {
    if (plan.kinds.has(kind)) renameResourceKeys(document, kind, renames[kind], rename, plan.operation);
  }
  for (const { definition } of editableServices(document)) {
    renameInService(document, definition, renames, plan.containerNames ? rename : null);
  }
}

function renameServiceKeys(document: Document, renames: Map<string, string>, rename: (n: string) => string, operation: string) {
  const services = topLevelMap(document, 'services');
  if (!services) return;
  const names = services.items.map((pair) => keyText(document, pair.key as YamlNode));
  checkCollisions('services', names, rename, operation);
  for (const pair of services.items) {
    const name = keyText(document, pair.key as YamlNode);
    const next = rename(name);
    if (next === name) continue;
    renames.set(name, next);
    pair.key = replaceScalar(pair.key as YamlNode, next);
  }
}

/**
 * Top-level networks, volumes, configs and secrets: renamed unless external (`external: true`
 * or the legacy `external: {name: …}`) or the platform network. The key `default` stays (it
 * configures Compose's implicit network; renamed it would be another network). A resource
 * with its own `name:` (`default` included) gets the suffix there too, so two copies of the
 * stack never share it.
 */
function renameResourceKeys(
  document: Document,
  kind: ResourceKind,
  renames: Map<string, string>,
  rename: (n: string) => string,
  operation: string,
) {
  const map = topLevelMap(document, kind);
  if (!map) return;
  const planned = map.items.map((pair) => {
    const name = keyText(document, pair.key as YamlNode);
    const definition = resolveNode(document, pair.value as YamlNode);
    const fixed = isExternal(document, definition) || (kind === 'networks' && isPlatformNetwork(document, name, definition));
    const keepKey = fixed || (kind === 'networks' && name === 'default');
    return { pair, name, definition, fixed, next: keepKey ? name : rename(name) };
  });
  const finals = planned.map((p) => p.next);
  const duplicate = finals.find((n, i) => finals.indexOf(n) !== i);
  if (duplicate !== undefined) {
    throw new ComposeError(`${operation} would give two ${kind} the name "${duplicate}"`);
  }
  for (const { pair, name, definition, fixed, next } of planned) {
    if (fixed) continue;
    if (next !== name) {
      renames.set(name, next);
      pair.key = replaceScalar(pair.key as YamlNode, next);
    }
    if (isMap(definition) && lookup(document, definition, 'name') !== undefined) {
      const target = pair.value === definition ? definition : (materialize(document, definition) as YAMLMap);
      flattenMerges(document, target);
      editValue(document, target, 'name', (value) => {
        const text = scalarText(document, value);
        if (text === null || text === '') return null;
        const suffixed = rename(text);
        if (suffixed === text) return null;
        pair.value = target;
        return replaceScalar(value, suffixed);
      });
    }
  }
}

function checkCollisions(kind: string, names: string[], rename: (n: string) => string, operation: string) {
  const finals = names.map(rename);
  const duplicate = finals.find((n, i) => finals.indexOf(n) !== i);
  if (duplicate !== undefined) throw new ComposeError(`${operation} would give two ${kind} the name "${duplicate}"`);
}

/** `external: true` (any YAML 1.1/1.2 spelling of true), or the legacy `external: {name: x}`. */
export function isExternal(document: Document, definition: YamlNode | null): boolean {
  if (!isMap(definition)) return false;
  const external = resolveNode(document, lookup(document, definition, 'external'));
  return isMap(external) || isTrueText(scalarText(document, external));
}

/** The platform network, under its own key or another (`name: skiff-network`). */
function isPlatformNetwork(document: Document, key: string, definition: YamlNode | null): boolean {
  if (key === PLATFORM_NETWORK) return true;
  return isMap(definition) && scalarText(document, lookup(document, definition, 'name')) === PLATFORM_NETWORK;
}

/** Every place a service names another service or a top-level resource. */
function renameInService(
  document: Document,
  service: YAMLMap,
  renames: Renames,
  containerRename: ((name: string) => string) | null,
): void {
  const renameScalar = (map: Map<string, string>) => (value: YamlNode) => {
    const text = scalarText(document, value);
    const next = text === null ? undefined : map.get(text);
    return next === undefined ? null : replaceScalar(value, next);
  };
  if (containerRename) {
    editValue(document, service, 'container_name', (value) => {
      const text = scalarText(document, value);
      if (text === null || text === '') return null;
      const next = containerRename(text);
      return next === text ? null : replaceScalar(value, next);
    });
  }
  editValue(document, service, 'depends_on', (value) => editNames(document, value, renames.services));
  editValue(document, service, 'links', (value) =>
    editSeq(document, value, (item) => rewriteText(document, item, (t) => renameBeforeColon(t, renames.services))),
  );
  editValue(document, service, 'volumes_from', (value) =>
    editSeq(document, value, (item) =>
      rewriteText(document, item, (t) => (t.startsWith('container:') ? null : renameBeforeColon(t, renames.services))),
    ),
  );
  editValue(document, service, 'extends', (value) => {
    if (isScalar(value)) return renameScalar(renames.services)(value);
    if (!isMap(value) || lookup(document, value, 'file') !== undefined) return null;
    return editValue(document, value, 'service', renameScalar(renames.services)) ? value : null;
  });
  for (const key of ['network_mode', 'ipc', 'pid']) {
    editValue(document, service, key, (value) =>
      rewriteText(document, value, (t) => (t.startsWith('service:') ? renamePrefixed(t, 'service:', renames.services) : null)),
    );
  }
  editValue(document, service, 'networks', (value) => editNames(document, value, renames.networks));
  editValue(document, service, 'volumes', (value) => editSeq(document, value, (item) => renameVolumeMount(document, item, renames.volumes)));
  editValue(document, service, 'secrets', (value) => editSeq(document, value, (item) => renameSourced(document, item, renames.secrets)));
  editValue(document, service, 'configs', (value) => editSeq(document, value, (item) => renameSourced(document, item, renames.configs)));
  editValue(document, service, 'build', (build) => {
    if (!isMap(build)) return null;
    const secrets = editValue(document, build, 'secrets', (value) =>
      editSeq(document, value, (item) => renameSourced(document, item, renames.secrets)),
    );
    const contexts = editValue(document, build, 'additional_contexts', (value) => editContexts(document, value, renames.services));
    return secrets || contexts ? build : null;
  });
}

/** A list of names, or a mapping keyed by names (`depends_on`, service `networks`). */
function editNames(document: Document, value: YamlNode, renames: Map<string, string>): YamlNode | null {
  if (isSeq(value)) {
    return editSeq(document, value, (item) => rewriteText(document, item, (t) => renames.get(t) ?? null));
  }
  if (isMap(value)) {
    let changed = false;
    for (const pair of value.items) {
      const key = resolveNode(document, pair.key as YamlNode);
      const text = scalarText(document, key);
      const next = text === null ? undefined : renames.get(text);
      if (next === undefined) continue;
      pair.key = replaceScalar(key, next);
      changed = true;
    }
    return changed ? value : null;
  }
  return null;
}

/** Edits each item of a sequence; an aliased item that changes is replaced by an edited copy. */
function editSeq(document: Document, value: YamlNode, edit: (item: YamlNode) => YamlNode | null): YamlNode | null {
  if (!isSeq(value)) return null;
  const seq = value as YAMLSeq;
  let changed = false;
  seq.items.forEach((item, index) => {
    const node = item as YamlNode;
    const target = resolveNode(document, node) === node ? node : materialize(document, node);
    const next = edit(target);
    if (next === null) return;
    seq.items[index] = next;
    changed = true;
  });
  return changed ? seq : null;
}

/** A scalar rewritten by `fn` (null: unchanged). */
function rewriteText(document: Document, node: YamlNode, fn: (text: string) => string | null): YamlNode | null {
  const text = scalarText(document, node);
  if (text === null) return null;
  const next = fn(text);
  return next === null || next === text ? null : replaceScalar(node, next);
}

/** `name` or `name:rest` with `name` renamed (links `db:database`, volumes_from `web:ro`). */
function renameBeforeColon(text: string, renames: Map<string, string>): string | null {
  const colon = text.indexOf(':');
  const name = colon < 0 ? text : text.slice(0, colon);
  const next = renames.get(name);
  return next === undefined ? null : next + (colon < 0 ? '' : text.slice(colon));
}

function renamePrefixed(text: string, prefix: string, renames: Map<string, string>): string | null {
  const next = renames.get(text.slice(prefix.length));
  return next === undefined ? null : prefix + next;
}

/**
 * A service volume: short `source:target[:mode]` (only a named volume as source changes; a
 * bind mount starts with `.`, `/`, `~` or `$`, an anonymous volume has no source) or long
 * `{type: volume, source: …}` (a missing type counts as volume).
 */
function renameVolumeMount(document: Document, item: YamlNode, renames: Map<string, string>): YamlNode | null {
  if (isScalar(item)) {
    return rewriteText(document, item, (text) => {
      const colon = text.indexOf(':');
      if (colon <= 0 || /^[./~$]/.test(text)) return null;
      const next = renames.get(text.slice(0, colon));
      return next === undefined ? null : next + text.slice(colon);
    });
  }
  if (!isMap(item)) return null;
  const type = scalarText(document, lookup(document, item, 'type'));
  if (type !== null && type !== 'volume') return null;
  return editValue(document, item, 'source', (value) => rewriteText(document, value, (t) => renames.get(t) ?? null)) ? item : null;
}

/** A service secret or config: short `name`, or long `{source: name, target: …}`. */
function renameSourced(document: Document, item: YamlNode, renames: Map<string, string>): YamlNode | null {
  if (isScalar(item)) return rewriteText(document, item, (t) => renames.get(t) ?? null);
  if (!isMap(item)) return null;
  return editValue(document, item, 'source', (value) => rewriteText(document, value, (t) => renames.get(t) ?? null)) ? item : null;
}

/** `build.additional_contexts`: `{name: service:web}` or `["name=service:web"]`. */
function editContexts(document: Document, value: YamlNode, renames: Map<string, string>): YamlNode | null {
  const edit = (text: string) => (text.startsWith('service:') ? renamePrefixed(text, 'service:', renames) : null);
  if (isSeq(value)) {
    return editSeq(document, value, (item) =>
      rewriteText(document, item, (text) => {
        const eq = text.indexOf('=');
        if (eq < 0) return null;
        const next = edit(text.slice(eq + 1));
        return next === null ? null : `${text.slice(0, eq + 1)}${next}`;
      }),
    );
  }
  if (!isMap(value)) return null;
  let changed = false;
  for (const { name } of entriesOf(document, value)) {
    changed = editValue(document, value, name, (v) => rewriteText(document, v, edit)) || changed;
  }
  return changed ? value : null;
}
