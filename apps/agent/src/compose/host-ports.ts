/**
 * The host ports a compose file as fetched may publish on this server (DeployCompose's
 * `forbidden_host_ports` and `max_host_ports`, set by the control plane): read with the same
 * parser as the control plane's save-time check (libs/domain composePublishedPorts), its
 * interpolations resolved with the stack's `.env`. A port still interpolated without a value
 * publishes none: Compose reads it as empty, and the engine picks one.
 */
import { composePublishedPorts } from '@skiff/domain';
import type { DeployCompose } from '@skiff/proto';
import { readComposeDotenv } from './dotenv-values.js';

/** Why the file may not run here (naming the file, the service and the port), or null. */
export function refusedHostPort(text: string, composePath: string, deploy: Pick<DeployCompose, 'envFile' | 'forbiddenHostPorts' | 'maxHostPorts'>): string | null {
  if (deploy.forbiddenHostPorts.length === 0 && deploy.maxHostPorts === 0) return null;
  const { published } = composePublishedPorts(text, readComposeDotenv(deploy.envFile));
  for (const { service, port } of published) {
    const [number, protocol] = port.split('/');
    const n = Number(number);
    const hit = deploy.forbiddenHostPorts.find((f) => f.protocol === protocol && f.first <= n && n <= f.last);
    if (hit) return `${composePath}: service "${service}" publishes port ${port}, ${hit.reason || 'already published on this server'}`;
  }
  const count = new Set(published.map((p) => p.port)).size;
  if (deploy.maxHostPorts > 0 && count > deploy.maxHostPorts) {
    return `${composePath}: publishes ${count} host ports, more than the ${deploy.maxHostPorts} a stack may publish`;
  }
  return null;
}
