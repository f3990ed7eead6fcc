/**
 * The host ports a compose file as fetched may publish on this server (DeployCompose's
 * `forbidden_host_ports` and `max_host_ports`, set by the control plane): read with the same
 * parser as the control plane's save-time check (libs/domain composePortRanges), its
 * interpolations resolved with the stack's `.env`. A port still interpolated without a value
 * publishes none: Compose reads it as empty, and the engine picks one.
 */
import { NOT_A_PORT, composePortRanges, countPorts } from '@skiff/domain';
import type { DeployCompose, PublishedHostPorts } from '@skiff/proto';
import { readComposeDotenv } from './dotenv-values.js';

/** Why the file may not run here (naming the file, the service and the port), or null. */
export function refusedHostPort(text: string, composePath: string, deploy: Pick<DeployCompose, 'envFile' | 'forbiddenHostPorts' | 'maxHostPorts'>): string | null {
  if (deploy.forbiddenHostPorts.length === 0 && deploy.maxHostPorts === 0) return null;
  const { published, ranges, invalid } = composePortRanges(text, readComposeDotenv(deploy.envFile));
  // Compose reads `+80`, `080` or `"0x50"` as port 80: not checked as written, so refused.
  if (invalid.length > 0) return `${composePath}: ${invalid[0]}: ${NOT_A_PORT}`;
  for (const { service, range } of published) {
    const hits = deploy.forbiddenHostPorts.filter((f) => f.protocol === range.protocol && f.first <= range.last && range.first <= f.last);
    if (hits.length === 0) continue;
    // The range's first forbidden port, and why.
    const hit = hits.reduce((a, b) => (Math.max(a.first, range.first) <= Math.max(b.first, range.first) ? a : b));
    const port = `${Math.max(hit.first, range.first)}/${range.protocol}`;
    return `${composePath}: service "${service}" publishes port ${port}, ${hit.reason || 'already published on this server'}`;
  }
  // Counted on the ranges merged per protocol: each port once, none listed.
  const count = countPorts(ranges);
  if (deploy.maxHostPorts > 0 && count > deploy.maxHostPorts) {
    return `${composePath}: publishes ${count} host ports, more than the ${deploy.maxHostPorts} a stack may publish`;
  }
  return null;
}

/**
 * The host ports the file as deployed publishes (ranges merged per protocol), reported in the
 * deploy's CommandResult: the control plane keeps them as the stack's, so that other workloads
 * of the server cannot claim them (a git source's file is only read here).
 */
export function publishedHostPorts(text: string, envFile: string): PublishedHostPorts {
  const { ranges } = composePortRanges(text, readComposeDotenv(envFile));
  return { ranges: ranges.map(({ first, last, protocol }) => ({ first, last, protocol })) };
}
