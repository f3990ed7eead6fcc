/**
 * A compose file as a YAML document that can be rewritten and written back with everything a
 * rewrite did not touch kept as written: comments, quoting, anchors and aliases, merge keys
 * (`<<`), Compose's custom tags (`!reset`, `!override`), key order.
 *
 * Scalars are read with the YAML failsafe schema: every scalar is the string it was written as
 * (`yes`, `0440`, `1:30`, `on` stay exactly that), so a scalar read and written back cannot
 * change meaning between YAML 1.1 readers (Compose v1) and YAML 1.2 readers (Compose v2), and
 * a name is always its text. Merge keys are understood: a service may inherit keys through
 * `<<: *defaults`. Text this code writes is quoted whenever a reader could take it for a
 * number, a boolean or null.
 *
 * Refused, each with its reason: YAML syntax errors, more than one document, an empty file, a
 * top level that is not a mapping, `services` / `networks` / `volumes` / `configs` / `secrets`
 * that are not mappings, a service that is not a mapping, a network/volume/config/secret that
 * is neither a mapping nor empty, merge keys that do not point at mappings, alias expansion
 * that would blow up (a "billion laughs" document). A missing `services` key is allowed (a
 * file with only `include:` is valid Compose).
 */
import { type Document, isMap, isScalar, parseAllDocuments, type Pair, type ScalarTag, type YAMLMap } from 'yaml';
import {
  ComposeError,
  entriesOf,
  flattenMerges,
  isEmptyScalar,
  isMergePair,
  keyText,
  materialize,
  ownMap,
  readMap,
  resolveNode,
  type YamlNode,
} from './yaml-nodes.js';

/** A parsed compose file. The transforms never change the file they get: they return a new one. */
export class ComposeFile {
  /** Use `parseCompose`; the document must have passed its checks. */
  constructor(readonly document: Document) {}

  /** A deep copy, for a transform to rewrite. */
  copy(): ComposeFile {
    return new ComposeFile(this.document.clone());
  }

  toString(): string {
    return serializeCompose(this);
  }
}

/** A compose file as text, or already parsed. */
export type ComposeInput = ComposeFile | string;

/**
 * Lets the failsafe schema write the nulls a document can hold (`{x}`, `? key`, `!!null`) as
 * nothing. A plain `null` in the text stays the string it was written as (and is written back
 * as `null`).
 */
const NULL_TAG: ScalarTag = {
  identify: (value) => value === null || value === undefined,
  default: true,
  tag: 'tag:yaml.org,2002:null',
  resolve: () => null,
  stringify: () => '',
};

/** Top-level keys naming resources that services refer to. */
export const RESOURCE_KINDS = ['networks', 'volumes', 'configs', 'secrets'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** Parses and checks a compose file (see the module comment for what is refused). */
export function parseCompose(text: string): ComposeFile {
  const documents = parseAllDocuments(text, {
    schema: 'failsafe',
    customTags: [NULL_TAG],
    merge: true,
    uniqueKeys: true,
    prettyErrors: true,
  });
  const list = Array.isArray(documents) ? documents : [];
  if (list.length > 1) throw new ComposeError(`a compose file is one YAML document; this text has ${list.length}`);
  const document = list[0];
  if (document && document.errors.length > 0) {
    throw new ComposeError(`invalid YAML: ${firstLine(document.errors[0].message)}`);
  }
  if (!document || document.contents === null || isEmptyScalar(document.contents)) {
    throw new ComposeError('the compose file is empty');
  }
  checkAliasExpansion(document);
  const file = new ComposeFile(document as unknown as Document);
  checkShape(file.document);
  return file;
}

/** The file as text; the parts no transform touched are written as they were read. */
export function serializeCompose(file: ComposeFile): string {
  return file.document.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** Text is parsed; a parsed file is taken as it is. */
export function composeFileOf(input: ComposeInput): ComposeFile {
  return typeof input === 'string' ? parseCompose(input) : input;
}

/** The service names, in file order (merged-in services included). */
export function composeServiceNames(input: ComposeInput): string[] {
  const document = composeFileOf(input).document;
  const services = readMap(document, rootMap(document), 'services', '`services`');
  return services ? entriesOf(document, services).map((e) => e.name) : [];
}

/** The top-level mapping, with merge keys flattened so it can be edited in place. */
export function rootMap(document: Document): YAMLMap {
  const root = resolveNode(document, document.contents as YamlNode);
  if (!isMap(root)) throw new ComposeError('the compose file must be a mapping (services, networks, volumes, …)');
  flattenMerges(document, root);
  return root;
}

/** The top-level `services`, `networks`, … mapping, editable in place; null when absent or empty. */
export function topLevelMap(document: Document, key: 'services' | ResourceKind): YAMLMap | null {
  return ownMap(document, rootMap(document), key, `\`${key}\``);
}

/**
 * The services as editable `[name, definition]` pairs: an aliased definition is replaced by a
 * copy and merge keys inside definitions are flattened, so editing one service can never
 * change another (for instance through a `<<: *web` in a second service).
 */
export function editableServices(document: Document): { pair: Pair; name: string; definition: YAMLMap }[] {
  const services = topLevelMap(document, 'services');
  if (!services) return [];
  const out = services.items.map((pair) => {
    const name = keyText(document, pair.key as YamlNode);
    let value = resolveNode(document, pair.value as YamlNode);
    if (value !== pair.value) {
      value = materialize(document, value);
      pair.value = value;
    }
    if (!isMap(value)) throw new ComposeError(`service "${name}" must be a mapping`);
    return { pair, name, definition: value };
  });
  // Flatten only after every definition is resolved, so no service copies an already edited one.
  for (const service of out) flattenMerges(document, service.definition);
  return out;
}

function checkShape(document: Document): void {
  const root = resolveNode(document, document.contents as YamlNode);
  if (!isMap(root)) {
    throw new ComposeError('the compose file must be a mapping of top-level keys (services, networks, volumes, …)');
  }
  for (const pair of root.items) {
    if (isMergePair(pair)) continue;
    if (!isScalar(resolveNode(document, pair.key as YamlNode))) throw new ComposeError('top-level keys must be plain names');
  }
  const services = readMap(document, root, 'services', '`services` (service names to their definitions)');
  for (const { name, value } of services ? entriesOf(document, services) : []) {
    const definition = resolveNode(document, value);
    if (!isMap(definition)) throw new ComposeError(`service "${name}" must be a mapping`);
    entriesOf(document, definition);
  }
  for (const kind of ['networks', 'volumes', 'configs', 'secrets'] as const) {
    const map = readMap(document, root, kind, `\`${kind}\``);
    for (const { name, value } of map ? entriesOf(document, map) : []) {
      const definition = resolveNode(document, value);
      if (definition !== null && !isEmptyScalar(definition) && !isMap(definition)) {
        throw new ComposeError(`${kind} "${name}" must be a mapping or empty`);
      }
    }
  }
}

/** Bounds alias expansion (billion laughs) and checks merge keys, as the library sees them. */
function checkAliasExpansion(document: { toJS(options: { maxAliasCount: number }): unknown }): void {
  try {
    document.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/alias count/i.test(message)) {
      throw new ComposeError('the compose file expands its aliases too far (a resource exhaustion attack?)');
    }
    throw new ComposeError(`invalid YAML: ${firstLine(message)}`);
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0].trim();
}
