/**
 * Helpers over the `yaml` package's document nodes, for rewriting a compose file in place.
 *
 * Documents are parsed with the failsafe schema (see compose-file.ts), so every scalar holds
 * the string it was written as, except merge keys, whose value is the symbol `<<`.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';

/** A compose file the transforms cannot work on, with the reason. */
export class ComposeError extends Error {
  override name = 'ComposeError';
}

export type YamlNode = Node;

/** Copies made while expanding aliases stop here (hostile documents). */
const MAX_COPIED_NODES = 100_000;

/** The node an alias points at (aliases of aliases followed); other nodes as they are. */
export function resolveNode(document: Document, node: YamlNode | null | undefined): YamlNode | null {
  let current: YamlNode | null = node ?? null;
  for (let hops = 0; isAlias(current); hops += 1) {
    if (hops > 64) throw new ComposeError('aliases point at each other in a loop');
    const target = current.resolve(document) as YamlNode | undefined;
    if (!target) throw new ComposeError(`alias *${current.source} points at no anchor`);
    current = target;
  }
  return current;
}

export function isMergePair(pair: Pair): boolean {
  const key = pair.key;
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/** A mapping key as text. Keys are scalars in a compose file; anything else is refused. */
export function keyText(document: Document, key: YamlNode | null): string {
  const node = resolveNode(document, key);
  if (isScalar(node) && (typeof node.value === 'string' || typeof node.value === 'number')) return String(node.value);
  if (isScalar(node) && node.value === null) return '';
  throw new ComposeError('mapping keys must be plain names');
}

/** The text of a scalar (through aliases); null for collections and absent values. */
export function scalarText(document: Document, node: YamlNode | null | undefined): string | null {
  const resolved = resolveNode(document, node);
  if (isScalar(resolved) && typeof resolved.value === 'string') return resolved.value;
  return null;
}

export function isEmptyScalar(node: unknown): boolean {
  return isScalar(node) && (node.value === '' || node.value === null) && !node.tag;
}

/** The mappings a merge key's value names, earlier (stronger) first. */
export function mergeSources(document: Document, value: YamlNode | null): YAMLMap[] {
  const resolved = resolveNode(document, value);
  const items = isSeq(resolved) ? (resolved.items as YamlNode[]) : [resolved];
  return items.map((item) => {
    const source = resolveNode(document, item);
    if (!isMap(source)) throw new ComposeError('a merge key (<<) must point at a mapping or a list of mappings');
    return source;
  });
}

export interface MapEntry {
  name: string;
  /** The key node as written (for copies that keep its quoting). */
  key: YamlNode;
  value: YamlNode | null;
  /** False when the entry comes through a merge key. */
  own: boolean;
}

/** The effective entries of a mapping: its own keys, then keys merged in through `<<`. */
export function entriesOf(document: Document, map: YAMLMap): MapEntry[] {
  const seen = new Set<string>();
  const out: MapEntry[] = [];
  const visit = (current: YAMLMap, own: boolean, trail: YAMLMap[]) => {
    if (trail.includes(current)) throw new ComposeError('merge keys (<<) include each other in a loop');
    if (trail.length > 32) throw new ComposeError('merge keys (<<) nest more than 32 levels');
    const merges: YamlNode[] = [];
    for (const pair of current.items) {
      if (isMergePair(pair)) {
        merges.push(pair.value as YamlNode);
        continue;
      }
      const name = keyText(document, pair.key as YamlNode);
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({ name, key: pair.key as YamlNode, value: (pair.value as YamlNode | null) ?? null, own });
    }
    for (const merge of merges) {
      for (const source of mergeSources(document, merge)) visit(source, false, [...trail, current]);
    }
  };
  visit(map, true, []);
  return out;
}

/** The effective value of `key` (own, or through merge keys); undefined when absent. */
export function lookup(document: Document, map: YAMLMap, key: string): YamlNode | null | undefined {
  const found = entriesOf(document, map).find((e) => e.name === key);
  return found === undefined ? undefined : found.value;
}

/** Reads the mapping under `key` without changing anything; null when absent or empty. */
export function readMap(document: Document, map: YAMLMap, key: string, what: string): YAMLMap | null {
  const value = resolveNode(document, lookup(document, map, key));
  if (value === null || isEmptyScalar(value)) return null;
  if (!isMap(value)) throw new ComposeError(`${what} must be a mapping`);
  return value;
}

/**
 * A deep copy of a node with every alias replaced by a copy of what it points at and no
 * anchors, so it can be placed anywhere in the document. Comments are not copied.
 */
export function materialize(document: Document, node: YamlNode | null): YamlNode {
  let copied = 0;
  const copy = (current: YamlNode | null, path: YamlNode[]): YamlNode => {
    copied += 1;
    if (copied > MAX_COPIED_NODES) throw new ComposeError('the compose file expands its aliases too far');
    if (current === null) return new Scalar(null);
    if (isAlias(current)) {
      const target = resolveNode(document, current) as YamlNode;
      if (path.includes(target)) throw new ComposeError('an alias contains itself');
      return copy(target, path);
    }
    if (isScalar(current)) {
      const scalar = new Scalar(current.value);
      scalar.type = current.type;
      if (current.tag) scalar.tag = current.tag;
      if (current.format) scalar.format = current.format;
      return scalar;
    }
    if (isMap(current)) {
      const map = new YAMLMap();
      map.flow = current.flow;
      if (current.tag) map.tag = current.tag;
      const inner = [...path, current];
      for (const pair of current.items) {
        map.items.push(new Pair(copy(pair.key as YamlNode, inner), copy((pair.value as YamlNode | null) ?? null, inner)));
      }
      return map;
    }
    if (isSeq(current)) {
      const seq = new YAMLSeq();
      seq.flow = current.flow;
      if (current.tag) seq.tag = current.tag;
      const inner = [...path, current];
      for (const item of current.items) seq.items.push(copy((item as YamlNode | null) ?? null, inner));
      return seq;
    }
    throw new ComposeError('unexpected YAML node');
  };
  return copy(node, []);
}

/**
 * Replaces the merge keys of a mapping by the entries they bring in (copies, placed where the
 * merge key was, keys the mapping sets itself left out). Afterwards the mapping stands alone:
 * editing it cannot change another mapping, and nothing it inherited can be changed elsewhere.
 */
export function flattenMerges(document: Document, map: YAMLMap): void {
  if (!map.items.some(isMergePair)) return;
  const own = new Set(map.items.filter((p) => !isMergePair(p)).map((p) => keyText(document, p.key as YamlNode)));
  const emitted = new Set<string>();
  const items: Pair[] = [];
  for (const pair of map.items) {
    if (!isMergePair(pair)) {
      items.push(pair);
      continue;
    }
    for (const source of mergeSources(document, pair.value as YamlNode)) {
      for (const entry of entriesOf(document, source)) {
        if (own.has(entry.name) || emitted.has(entry.name)) continue;
        emitted.add(entry.name);
        items.push(new Pair(materialize(document, entry.key), materialize(document, entry.value)));
      }
    }
  }
  map.items = items;
}

/**
 * The mapping under `key`, made safe to edit in place: an alias is replaced by a copy of its
 * target and merge keys are flattened. Null when absent or empty; refused when not a mapping.
 */
export function ownMap(document: Document, map: YAMLMap, key: string, what: string): YAMLMap | null {
  const pair = ownPair(document, map, key);
  if (!pair) {
    const inherited = lookup(document, map, key);
    if (inherited === undefined) return null;
    flattenMerges(document, map);
    return ownMap(document, map, key, what);
  }
  let value = (pair.value as YamlNode | null) ?? null;
  if (isAlias(value)) {
    value = materialize(document, value);
    pair.value = value;
  }
  if (value === null || isEmptyScalar(value)) return null;
  if (!isMap(value)) throw new ComposeError(`${what} must be a mapping`);
  flattenMerges(document, value);
  return value;
}

/** The mapping's own pair for `key` (merge keys not followed). */
export function ownPair(document: Document, map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => !isMergePair(p) && keyText(document, p.key as YamlNode) === key);
}

/**
 * Edits the value under `key` of a mapping whose merge keys are already flattened. `edit`
 * gets a node it may change in place (an aliased value is first copied) and returns the new
 * value, or null when nothing changed; the copy is only kept when something changed.
 */
export function editValue(
  document: Document,
  map: YAMLMap,
  key: string,
  edit: (value: YamlNode) => YamlNode | null,
): boolean {
  const pair = ownPair(document, map, key);
  if (!pair) return false;
  const value = (pair.value as YamlNode | null) ?? new Scalar(null);
  const target = isAlias(value) ? materialize(document, value) : value;
  const result = edit(target);
  if (result === null) return false;
  pair.value = result;
  return true;
}

/** Sets (or adds, at the end) the value under `key`. */
export function setValue(document: Document, map: YAMLMap, key: string, value: YamlNode): void {
  const pair = ownPair(document, map, key);
  if (pair) pair.value = value;
  else map.items.push(new Pair(textScalar(key), value));
}

/** A string scalar for text this code writes, double-quoted unless it is a plain name any YAML reader takes for a string. */
export function textScalar(text: string): Scalar {
  const scalar = new Scalar(text);
  if (!/^[A-Za-z0-9_./@-]+$/.test(text) || looksLikeNonString(text) || text.startsWith('-')) scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

/**
 * A replacement for a scalar whose text this code changed (a suffix added): written the way
 * the original was (plain, single or double quotes), except that a plain scalar is quoted when
 * the new text could be read as a number, a boolean or null.
 */
export function replaceScalar(original: YamlNode | null, text: string): Scalar {
  if (!isScalar(original)) return textScalar(text);
  const scalar = new Scalar(text);
  if (original.type === Scalar.QUOTE_SINGLE || original.type === Scalar.QUOTE_DOUBLE) scalar.type = original.type;
  else if (looksLikeNonString(text)) scalar.type = Scalar.QUOTE_DOUBLE;
  if (original.tag) scalar.tag = original.tag;
  return scalar;
}

/** Plain scalars that a YAML 1.1 (Compose v1) or 1.2 (Compose v2) reader takes for a boolean, null, a number or a date. */
const SPECIAL_WORDS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|)$/;
const NUMBER =
  /^[-+]?(?:[0-9][0-9_]*(?::[0-5]?[0-9])*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|\.(?:inf|Inf|INF|nan|NaN|NAN))$/;
const DATE = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/;

export function looksLikeNonString(text: string): boolean {
  return SPECIAL_WORDS.test(text) || NUMBER.test(text) || DATE.test(text);
}

/** `true`, written plainly (a boolean to every YAML reader). */
export function trueScalarNode(): Scalar {
  return new Scalar('true');
}

/** A 1.1/1.2 truthy flag as written plainly (`external: true`, `external: yes`). */
export function isTrueText(text: string | null): boolean {
  return text !== null && /^(?:true|True|TRUE|yes|Yes|YES|on|On|ON|y|Y)$/.test(text);
}
