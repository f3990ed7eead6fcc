import type { Db } from '@skiff/db';
import { ComposeError, NOT_A_PORT, type PortRange, composePortRanges, countPorts, listPorts, parseDotenv } from '@skiff/domain';
import type { SecretBox } from '../../crypto/secret-box.js';
import { Invalid } from '../../errors.js';
import { lockUntilCommit } from './xact-lock.js';

/** A host port a workload publishes, with its protocol (`28081/tcp`). */
type HostPort = string;

interface Publisher {
  id: string;
  endpointSpecCluster: unknown;
  externalPort?: number | null;
}

/** The host ports of an `endpointSpecCluster` (its Ports' PublishedPort) and of an `externalPort`. */
export function hostPortsOf(endpointSpec: unknown, externalPort?: number | null): HostPort[] {
  const spec = typeof endpointSpec === 'string' ? parsed(endpointSpec) : endpointSpec;
  const ports = (spec as { Ports?: unknown } | null)?.Ports;
  const out: HostPort[] = [];
  for (const p of Array.isArray(ports) ? ports : []) {
    const { PublishedPort, Protocol } = (p ?? {}) as { PublishedPort?: unknown; Protocol?: unknown };
    if (typeof PublishedPort === 'number' && PublishedPort > 0) out.push(`${PublishedPort}/${typeof Protocol === 'string' ? Protocol : 'tcp'}`);
  }
  if (typeof externalPort === 'number') out.push(`${externalPort}/tcp`);
  return out;
}

/** An `endpointSpecCluster` without the host ports it publishes (a copy's: they stay its original's). */
export function withoutHostPorts(endpointSpec: unknown): unknown {
  const spec = typeof endpointSpec === 'string' ? parsed(endpointSpec) : endpointSpec;
  const ports = (spec as { Ports?: unknown } | null)?.Ports;
  if (!Array.isArray(ports)) return endpointSpec;
  const kept = ports.filter((p) => hostPortsOf({ Ports: [p] }).length === 0);
  return { ...(spec as object), Ports: kept };
}

const parsed = (text: string) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
};

/**
 * Host ports Skiff itself publishes on every server, at the agents' defaults: a workload that
 * asked for one would wait for it, and take it the next time Skiff's own container restarted
 * (every domain's traffic, or the images the nodes pull).
 */
const RESERVED: ReadonlyMap<HostPort, string> = new Map([
  ['80/tcp', "Skiff's proxy (HTTP)"],
  ['443/tcp', "Skiff's proxy (HTTPS)"],
  ['443/udp', "Skiff's proxy (HTTP/3)"],
  ['5030/tcp', "Skiff's cluster registry"],
  ['5031/tcp', "Skiff's cluster registry mirror"],
  ['2020/tcp', "Skiff's proxy dashboard"],
]);

/**
 * The host ports the control plane itself listens on, on the platform host (where it runs):
 * its API (`SKIFF_PORT`), the agents' reports (`SKIFF_GRPC_PORT`) and a NATS on this host
 * (`SKIFF_NATS_URL` naming loopback or localhost). A workload publishing one would take its
 * traffic (Swarm's ingress answers before a process bound to one address).
 */
export function platformHostPorts(config: { port: number; grpcPort: number; natsUrl?: string }): ReadonlyMap<HostPort, string> {
  const ports = new Map<HostPort, string>([
    [`${config.grpcPort}/tcp`, "Skiff's agent reports (SKIFF_GRPC_PORT)"],
    [`${config.port}/tcp`, "Skiff's API (SKIFF_PORT)"],
  ]);
  const nats = config.natsUrl ? localNatsPort(config.natsUrl) : null;
  if (nats !== null) ports.set(`${nats}/tcp`, "Skiff's NATS (SKIFF_NATS_URL)");
  return ports;
}

function localNatsPort(url: string): number | null {
  try {
    const { hostname, port } = new URL(url);
    if (!/^(?:localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$/.test(hostname)) return null;
    return Number(port || 4222);
  } catch {
    return null;
  }
}

/** What a raw compose file publishes (composePortRanges), or null for an empty file or one that does not parse (deploy refuses it). */
function portRangesOf(composeFile: string | null, env?: ReadonlyMap<string, string>): ReturnType<typeof composePortRanges> | null {
  if (!composeFile || composeFile.trim() === '') return null;
  try {
    return composePortRanges(composeFile, env);
  } catch (err) {
    if (err instanceof ComposeError) return null;
    throw err;
  }
}

/** The host ports a compose stack's raw file publishes, its interpolations resolved with `env` (the stack's variables). */
export function composeHostPorts(composeFile: string | null, env?: ReadonlyMap<string, string>): HostPort[] {
  const found = portRangesOf(composeFile, env);
  return found ? listPorts(found.ranges) : [];
}

/** The variables of a stack's stored (sealed) `env`, as written: a reference to another scope's stays unresolved. */
export function stackVariables(secrets: SecretBox | undefined, sealedEnv: string | null | undefined): Map<string, string> {
  if (!secrets || !sealedEnv) return new Map();
  return parseDotenv(secrets.open(sealedEnv)).variables;
}

/** Default of `SKIFF_MAX_COMPOSE_PORTS`: the host ports one compose stack may publish. */
export const DEFAULT_MAX_COMPOSE_PORTS = 100;

/**
 * The host ports the compose file being saved or deployed publishes, refused as `field` when a
 * published value is not a port as written (`+80`, `080`, `0x50`: Compose reads them as port 80)
 * or when they are more than one stack may publish (`maxComposePorts`), counted before they are
 * listed: a range (`1-65535:1-65535`) would otherwise take a whole server's ports.
 */
export function stackHostPorts(deps: Pick<PortDeps, 'maxComposePorts'>, composeFile: string | null, env?: ReadonlyMap<string, string>, field = 'composeFile'): HostPort[] {
  const found = portRangesOf(composeFile, env);
  if (!found) return [];
  if (found.invalid.length > 0) throw Invalid(field, `${found.invalid[0]}: ${NOT_A_PORT}`);
  const max = deps.maxComposePorts ?? DEFAULT_MAX_COMPOSE_PORTS;
  const count = countPorts(found.ranges);
  if (count > max) throw Invalid(field, `publishes ${count} host ports, more than the ${max} a stack may publish`);
  return listPorts(found.ranges);
}

/** What the checks need of the service dependencies: the database and the platform host's own ports. */
export interface PortDeps {
  db: Db;
  platformPorts?: ReadonlyMap<HostPort, string>;
  /** To read other stacks' variables (their `${PORT}`); without it those ports stay unresolved. */
  secrets?: SecretBox;
  /** `SKIFF_MAX_COMPOSE_PORTS` (default DEFAULT_MAX_COMPOSE_PORTS). */
  maxComposePorts?: number;
}

/** Why a port another workload of the server publishes is refused. */
export const TAKEN = 'already published on this server';

/**
 * The host ports a workload (`exceptId`) of the server may not publish, each with why: those
 * Skiff publishes (RESERVED) and, on the platform host, the control plane's own ("reserved for
 * …"), then those another application, cache, database service or compose stack (its raw
 * file's `ports:`, resolved with its variables, and those its last deploy published, as its
 * agent reported them: recordDeployedHostPorts) of the server publishes.
 */
export async function forbiddenHostPorts(deps: PortDeps, serverId: string | null, exceptId: string): Promise<Map<HostPort, string>> {
  const forbidden = new Map<HostPort, string>();
  const own = serverId === null ? (deps.platformPorts ?? new Map<HostPort, string>()) : new Map<HostPort, string>();
  for (const [port, what] of [...RESERVED, ...own]) forbidden.set(port, `reserved for ${what}`);
  const { db } = deps;
  const onServer = <Q extends { where: (...a: any[]) => Q }>(q: Q): Q => (serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId));
  const queries = (['applications', 'cacheInstances', 'databaseServices'] as const).map((table) => {
    const q = db.selectFrom(table as 'cacheInstances').select(table === 'applications' ? ['id', 'endpointSpecCluster'] : ['id', 'endpointSpecCluster', 'externalPort']);
    return onServer(q as any).where('id', '!=', exceptId).execute() as Promise<Publisher[]>;
  });
  const stacks = onServer(db.selectFrom('composeStacks').select(['sourceType', 'composeFile', 'env', 'deployedHostPorts']) as any).where('id', '!=', exceptId).execute() as Promise<
    { sourceType: string; composeFile: string; env: string | null; deployedHostPorts: string | null }[]
  >;
  const taken = [
    ...(await Promise.all(queries)).flat().flatMap((w) => hostPortsOf(w.endpointSpecCluster, w.externalPort)),
    ...(await stacks).flatMap((s) => [
      ...(s.sourceType === 'raw' ? composeHostPorts(s.composeFile, stackVariables(deps.secrets, s.env)) : []),
      // What its last deploy published (a git source's file, a `${PORT}` of the environment's variables).
      ...listPorts(deployedHostPortsOf(s.deployedHostPorts)),
    ]),
  ];
  for (const port of taken) if (!forbidden.has(port)) forbidden.set(port, TAKEN);
  return forbidden;
}

const PROTOCOLS = new Set(['tcp', 'udp', 'sctp']);
/** More ranges than an agent's report may hold (a stack publishes at most SKIFF_MAX_COMPOSE_PORTS ports). */
const MAX_REPORTED_RANGES = 1000;
/** The most ports a stored column is read as (what was kept before reports were cut to SKIFF_MAX_COMPOSE_PORTS). */
const MAX_STORED_PORTS = 65_535;

/**
 * The valid ranges of an agent's report (ports of 1 to 65535, tcp/udp/sctp), at most
 * MAX_REPORTED_RANGES, cut after `maxPorts` ports: every check lists them one by one, and an
 * agent's word is no reason to list millions.
 */
function validRanges(ranges: readonly PortRange[], maxPorts: number): PortRange[] {
  const port = (n: unknown) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;
  const out: PortRange[] = [];
  let room = maxPorts;
  for (const { first, last, protocol } of ranges.filter((r) => PROTOCOLS.has(r.protocol) && port(r.first) && port(r.last) && r.first <= r.last)) {
    if (room <= 0 || out.length === MAX_REPORTED_RANGES) break;
    const kept = Math.min(last, first + room - 1);
    out.push({ first, last: kept, protocol });
    room -= kept - first + 1;
  }
  return out;
}

/** The stored `deployedHostPorts` column, read defensively (null or unreadable: none). */
export function deployedHostPortsOf(column: string | null): PortRange[] {
  const value = column ? parsed(column) : null;
  return Array.isArray(value) ? validRanges(value as PortRange[], MAX_STORED_PORTS) : [];
}

/**
 * Keeps the host ports a compose stack's deploy published, as its agent reported them (a git
 * source's file is read by the agent only): from then on they are the stack's in every other
 * workload's check. Written under the server's published-ports lock (claimHostPorts), so a
 * save checking ports sees them either before or after, never half. No more than `maxPorts`
 * (SKIFF_MAX_COMPOSE_PORTS: the agent refuses a file publishing more) are kept.
 */
export async function recordDeployedHostPorts(tx: Db, stackId: string, ranges: readonly PortRange[], maxPorts = DEFAULT_MAX_COMPOSE_PORTS): Promise<void> {
  const stack = await tx.selectFrom('composeStacks').select(['id', 'serverId']).where('id', '=', stackId).executeTakeFirst();
  if (!stack) return;
  await lockUntilCommit(tx, `skiff.published-ports:${stack.serverId ?? ''}`);
  await tx.updateTable('composeStacks').set({ deployedHostPorts: JSON.stringify(validRanges(ranges, maxPorts)) }).where('id', '=', stack.id).execute();
}

/**
 * A host port belongs to one workload of a server, whatever its organization: Swarm starts a
 * task waiting for a taken host-mode port as soon as that port is free, so a second publisher
 * would take the port over the next time its first one stops. `ports` (of the workload
 * `exceptId`) that forbiddenHostPorts names are refused, naming `field`.
 */
export async function assertHostPortsFree(deps: PortDeps, serverId: string | null, ports: HostPort[], exceptId: string, field: string): Promise<void> {
  if (ports.length === 0) return;
  const forbidden = await forbiddenHostPorts(deps, serverId, exceptId);
  // A reserved port is named before a taken one, whichever comes first in the file.
  const clash = ports.find((p) => forbidden.get(p)?.startsWith('reserved')) ?? ports.find((p) => forbidden.has(p));
  if (clash) throw Invalid(field, `port ${clash.replace('/tcp', '')} is ${forbidden.get(clash)}`);
}


/**
 * assertHostPortsFree for a save: in the transaction `tx` that writes the ports, under a lock of
 * the server's published ports held until that write commits, so two saves of one port (of any
 * workloads, tables or organizations) cannot both pass the check. Saves publishing no port take
 * no lock.
 */
export async function claimHostPorts(tx: Db, deps: PortDeps, serverId: string | null, ports: HostPort[], exceptId: string, field: string): Promise<void> {
  if (ports.length === 0) return;
  await lockUntilCommit(tx, `skiff.published-ports:${serverId ?? ''}`);
  await assertHostPortsFree({ ...deps, db: tx }, serverId, ports, exceptId, field);
}
