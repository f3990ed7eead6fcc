/** What a workload key names: `<type>:<id>` (workloadKey). */
export type WorkloadType = 'application' | 'compose' | 'cache' | 'database' | 'proxy';

const WORKLOAD_TYPES = new Set<string>(['application', 'compose', 'cache', 'database', 'proxy']);

/** `<workload type>:<id>`: the key of a workload's FIFO queue on its agent. */
export const workloadKey = (type: WorkloadType, id: string) => `${type}:${id}`;

/** The workload a key names, when it is one of the known types. */
export function parseWorkloadKey(key: string): { type: WorkloadType; id: string } | null {
  const at = key.indexOf(':');
  const type = key.slice(0, at);
  const id = key.slice(at + 1);
  return at > 0 && id !== '' && WORKLOAD_TYPES.has(type) ? { type: type as WorkloadType, id } : null;
}
