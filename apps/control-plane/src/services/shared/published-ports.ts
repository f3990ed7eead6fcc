import type { Db } from '@skiff/db';
import { Invalid } from '../../errors.js';

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
]);

/**
 * A host port belongs to one workload of a server, whatever its organization: Swarm starts a
 * task waiting for a taken host-mode port as soon as that port is free, so a second publisher
 * would take the port over the next time its first one stops. `ports` (of the workload
 * `exceptId`) already published by another application, cache or database service of the
 * server are refused, naming `field`.
 */
export async function assertHostPortsFree(db: Db, serverId: string | null, ports: HostPort[], exceptId: string, field: string): Promise<void> {
  if (ports.length === 0) return;
  const reserved = ports.find((p) => RESERVED.has(p));
  if (reserved) throw Invalid(field, `port ${reserved.replace('/tcp', '')} is reserved for ${RESERVED.get(reserved)}`);
  const queries = (['applications', 'cacheInstances', 'databaseServices'] as const).map((table) => {
    let q = db.selectFrom(table as 'cacheInstances').select(table === 'applications' ? ['id', 'endpointSpecCluster'] : ['id', 'endpointSpecCluster', 'externalPort']);
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    return q.where('id', '!=', exceptId).execute() as Promise<Publisher[]>;
  });
  const taken = new Set((await Promise.all(queries)).flat().flatMap((w) => hostPortsOf(w.endpointSpecCluster, w.externalPort)));
  const clash = ports.find((p) => taken.has(p));
  if (clash) throw Invalid(field, `port ${clash.replace('/tcp', '')} is already published on this server`);
}
