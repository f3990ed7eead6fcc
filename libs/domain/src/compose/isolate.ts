/**
 * Networks of a deployed stack (REFERENCE.md, "Isolated deployment" and "Compose domains").
 *
 * `isolateCompose(file, appName, options)`: the stack gets its own network, named `appName`,
 * declared external at the top level (the agent creates it before `docker compose up`, so its
 * name is exactly `appName`, with no project prefix) and joined by every service; services
 * with a `network_mode` are left alone (Compose forbids `networks` beside it). Stacks then
 * reach each other only through what they publish on the platform network.
 * - A service without `networks` is on Compose's implicit `default` network; it gets
 *   `[default, appName]`, so it keeps every peer it had. A listed or mapped `networks` gets
 *   `appName` added, in the form it was written in.
 * - An existing top-level network under the key `appName` is replaced by `{external: true}`
 *   (it has to be the network the agent created); an external network already named
 *   `appName` under another key is used under that key.
 * - `suffixVolumes` (the stack's `isolatedDeploymentsVolume`): named volumes get
 *   `-<appName>` at the top level and where services use them, as randomize does (external
 *   volumes never). Off by default: volumes are renamed only when asked, since a renamed
 *   volume is, to Docker, an empty new one.
 * - `routedServices`: see `attachPlatformNetwork`.
 *
 * `attachPlatformNetwork(file, appName, services)`: the services the proxy routes to (those a
 * domain names) join the platform network, declared external at the top level. The choice is
 * by name, never "all services": a database of the stack must not be reachable from every
 * workload of the server. Each routed service gets the network alias
 * `composeUpstream(appName, service)` (`<service>.<appName>`) on the platform network: the
 * bare service name is also registered there, by every stack that has a `web`, so the proxy
 * must dial the alias to reach this stack's service. A routed service with `network_mode` is
 * refused (it cannot join a network), as is a name the file does not define.
 *
 * Both are idempotent: applied again they change nothing.
 */
import { type Document, isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { PLATFORM_NETWORK } from '../swarm-spec.js';
import { type ComposeFile, type ComposeInput, composeFileOf, editableServices, rootMap, topLevelMap } from './compose-file.js';
import { applySuffix, isExternal } from './rename.js';
import {
  ComposeError,
  isEmptyScalar,
  keyText,
  lookup,
  materialize,
  ownPair,
  resolveNode,
  scalarText,
  setValue,
  textScalar,
  trueScalarNode,
  type YamlNode,
} from './yaml-nodes.js';

export interface IsolateOptions {
  /** Named volumes get `-<appName>` (the stack's `isolatedDeploymentsVolume`). Default false. */
  suffixVolumes?: boolean;
  /** Services the proxy routes to; they join the platform network (see `attachPlatformNetwork`). */
  routedServices?: readonly string[];
  /** Suffixes other steps of the same pipeline add (the randomize suffix). */
  otherSuffixes?: readonly string[];
}

/** Docker network names: a letter or digit, then letters, digits, `_`, `.`, `-`. */
const NETWORK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const RESERVED_NETWORKS = new Set(['default', 'host', 'none', 'bridge', 'ingress', PLATFORM_NETWORK]);

export function isolateCompose(input: ComposeInput, appName: string, options: IsolateOptions = {}): ComposeFile {
  checkNetworkName(appName);
  const file = composeFileOf(input).copy();
  const document = file.document;
  const key = ensureExternalNetwork(document, appName);
  for (const { definition } of editableServices(document)) {
    if (lookup(document, definition, 'network_mode') !== undefined) continue;
    joinNetwork(document, definition, key, null);
  }
  if (options.suffixVolumes) {
    applySuffix(document, {
      kinds: new Set(['volumes']),
      suffix: appName,
      otherSuffixes: options.otherSuffixes ?? [],
      containerNames: false,
      operation: 'suffixing volumes',
    });
  }
  if (options.routedServices && options.routedServices.length > 0) {
    return attachPlatformNetwork(file, appName, options.routedServices);
  }
  return file;
}

export function attachPlatformNetwork(input: ComposeInput, appName: string, services: readonly string[]): ComposeFile {
  checkNetworkName(appName);
  const file = composeFileOf(input).copy();
  if (services.length === 0) return file;
  const document = file.document;
  const byName = new Map(editableServices(document).map((s) => [s.name, s.definition]));
  for (const name of services) {
    const definition = byName.get(name);
    if (!definition) throw new ComposeError(`service "${name}" is not defined in the compose file`);
    if (lookup(document, definition, 'network_mode') !== undefined) {
      throw new ComposeError(`service "${name}" sets network_mode, so it cannot join the platform network the proxy routes through`);
    }
  }
  const key = ensureExternalNetwork(document, PLATFORM_NETWORK);
  for (const name of new Set(services)) joinNetwork(document, byName.get(name) as YAMLMap, key, composeUpstream(appName, name));
  return file;
}

/** The host name the proxy dials for a routed compose service: its alias on the platform network. */
export function composeUpstream(appName: string, service: string): string {
  return `${service}.${appName}`;
}

function checkNetworkName(appName: string): void {
  if (!NETWORK_NAME.test(appName)) {
    throw new ComposeError('appName must start with a letter or digit and hold at most 63 letters, digits, ".", "_" or "-"');
  }
  if (RESERVED_NETWORKS.has(appName)) throw new ComposeError(`appName "${appName}" is the name of a network Docker or Skiff reserves`);
}

/**
 * The top-level key under which the external network `name` is declared, declaring it
 * (`<name>: {external: true}`) when no external network of that name exists.
 */
function ensureExternalNetwork(document: Document, name: string): string {
  const root = rootMap(document);
  let networks = topLevelMap(document, 'networks');
  if (!networks) {
    networks = new YAMLMap();
    setValue(document, root, 'networks', networks);
  }
  for (const pair of networks.items) {
    const key = keyText(document, pair.key as YamlNode);
    const definition = resolveNode(document, pair.value as YamlNode);
    if (key !== name && isExternal(document, definition) && externalName(document, key, definition) === name) return key;
  }
  const existing = ownPair(document, networks, name);
  const definition = existing ? resolveNode(document, existing.value as YamlNode) : null;
  if (existing && isExternal(document, definition) && externalName(document, name, definition) === name) return name;
  const external = new YAMLMap();
  external.items.push(new Pair(textScalar('external'), trueScalarNode()));
  setValue(document, networks, name, external);
  return name;
}

/** The Docker name of an external network: `name:`, the legacy `external: {name}`, or its key. */
function externalName(document: Document, key: string, definition: YamlNode | null): string {
  if (!isMap(definition)) return key;
  const name = scalarText(document, lookup(document, definition, 'name'));
  if (name) return name;
  const legacy = resolveNode(document, lookup(document, definition, 'external'));
  const legacyName = isMap(legacy) ? scalarText(document, lookup(document, legacy, 'name')) : null;
  return legacyName || key;
}

/**
 * Makes a (flattened) service join the network under `key`, with `alias` among its aliases
 * there when given. The service's `networks` keeps its form (list or map) unless an alias
 * needs the map form.
 */
function joinNetwork(document: Document, service: YAMLMap, key: string, alias: string | null): void {
  const pair = ownPair(document, service, 'networks');
  let networks = pair ? (pair.value as YamlNode | null) : null;
  if (networks !== null && resolveNode(document, networks) !== networks) {
    networks = materialize(document, networks);
    if (pair) pair.value = networks;
  }
  if (networks === null || isEmptyScalar(networks)) {
    networks = new YAMLSeq();
    (networks as YAMLSeq).items.push(textScalar('default'));
    setValue(document, service, 'networks', networks);
  }
  if (isSeq(networks)) {
    const names = networks.items.map((item) => scalarText(document, item as YamlNode));
    if (alias === null) {
      if (!names.includes(key)) networks.items.push(textScalar(key));
      return;
    }
    networks = listToMap(document, networks);
    setValue(document, service, 'networks', networks);
  }
  if (!isMap(networks)) throw new ComposeError('a service\'s networks must be a list or a mapping');
  joinInMap(document, networks, key, alias);
}

function listToMap(document: Document, list: YAMLSeq): YAMLMap {
  const map = new YAMLMap();
  for (const item of list.items) {
    const name = scalarText(document, item as YamlNode);
    if (name === null) throw new ComposeError('a service\'s networks list must hold network names');
    map.items.push(new Pair(textScalar(name), new Scalar(null)));
  }
  return map;
}

function joinInMap(document: Document, networks: YAMLMap, key: string, alias: string | null): void {
  const entry = ownPair(document, networks, key);
  if (!entry) {
    networks.items.push(new Pair(textScalar(key), alias === null ? new Scalar(null) : aliasesMap(alias)));
    return;
  }
  if (alias === null) return;
  let settings = resolveNode(document, entry.value as YamlNode);
  if (settings === null || isEmptyScalar(settings)) {
    entry.value = aliasesMap(alias);
    return;
  }
  if (!isMap(settings)) throw new ComposeError(`the settings of network "${key}" in a service must be a mapping`);
  if (settings !== entry.value) {
    settings = materialize(document, settings) as YAMLMap;
    entry.value = settings;
  }
  const map = settings as YAMLMap;
  const aliasesPair = ownPair(document, map, 'aliases');
  let aliases = aliasesPair ? resolveNode(document, aliasesPair.value as YamlNode) : null;
  if (aliases === null || isEmptyScalar(aliases)) {
    const seq = new YAMLSeq();
    seq.items.push(textScalar(alias));
    setValue(document, map, 'aliases', seq);
    return;
  }
  if (!isSeq(aliases)) throw new ComposeError(`the aliases of network "${key}" in a service must be a list`);
  if (aliasesPair && aliases !== aliasesPair.value) {
    aliases = materialize(document, aliases);
    aliasesPair.value = aliases;
  }
  const list = aliases as YAMLSeq;
  if (!list.items.some((item) => isScalar(resolveNode(document, item as YamlNode)) && scalarText(document, item as YamlNode) === alias)) {
    list.items.push(textScalar(alias));
  }
}

function aliasesMap(alias: string): YAMLMap {
  const seq = new YAMLSeq();
  seq.items.push(textScalar(alias));
  const map = new YAMLMap();
  map.items.push(new Pair(textScalar('aliases'), seq));
  return map;
}
