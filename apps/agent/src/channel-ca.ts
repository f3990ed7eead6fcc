/**
 * How the agent reaches the control plane safely. With the control plane's CA (given at join,
 * kept in `<dataDir>/control-plane-ca.pem`, or SKIFF_CA_FILE) it speaks TLS to gRPC and NATS
 * and trusts that CA alone, not the system's roots. Without one, it reaches only loopback
 * addresses, in clear: a remote agent can never be pointed at a cleartext control plane.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChannelCredentials, credentials } from '@grpc/grpc-js';
import { grpcTargetHost, isLoopbackHost } from '@skiff/domain';
import { type AgentConfig, ConfigError } from './config.js';

export const STORED_CA_FILE = 'control-plane-ca.pem';

export interface ChannelSecurity {
  /** For the report, presence and artifact clients. */
  grpc: ChannelCredentials;
  /** TLS options of the NATS connection; undefined: in clear (loopback only). */
  nats: { ca: string } | undefined;
  /** What may be logged. */
  describe: { grpc: 'tls' | 'clear'; nats: 'tls' | 'clear'; ca: 'given' | 'file' | 'stored' | 'none' };
}

/** The CA PEM the configuration names; a given one is kept in the data directory (0644) for later starts. */
export async function channelCa(config: Pick<AgentConfig, 'ca' | 'dataDir'>): Promise<string | null> {
  const stored = join(config.dataDir, STORED_CA_FILE);
  let pem: string;
  if ('pem' in config.ca) {
    pem = config.ca.pem;
    checkCa(pem, 'SKIFF_CONTROL_PLANE_CA');
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${stored}.tmp`;
    await writeFile(temporary, pem, { mode: 0o644 });
    await rename(temporary, stored);
    return pem;
  }
  const file = 'file' in config.ca ? config.ca.file : stored;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    if ('stored' in config.ca && (err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError([`SKIFF_CA_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`]);
  }
  checkCa(pem, 'file' in config.ca ? 'SKIFF_CA_FILE' : `the stored CA (${stored})`);
  return pem;
}

function checkCa(pem: string, what: string): void {
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(pem);
  } catch {
    throw new ConfigError([`${what} is not a PEM certificate`]);
  }
  if (!ca.ca) throw new ConfigError([`${what} is not a CA certificate`]);
}

/** The channel's credentials for this configuration and CA; a ConfigError naming the variable when an address beyond loopback would be used in clear. */
export function channelSecurity(config: Pick<AgentConfig, 'controlPlaneGrpc' | 'natsServers' | 'ca'>, ca: string | null): ChannelSecurity {
  const caSource = ca === null ? 'none' : 'pem' in config.ca ? 'given' : 'file' in config.ca ? 'file' : 'stored';
  const natsTls = config.natsServers.some((s) => new URL(s).protocol === 'tls:');
  const natsRemote = config.natsServers.some((s) => !isLoopbackHost(new URL(s).hostname));
  if (ca !== null) {
    // A nats:// URL on loopback stays in clear (a NATS of this machine without TLS); any other is TLS.
    const nats = natsTls || natsRemote ? { ca } : undefined;
    return {
      grpc: credentials.createSsl(Buffer.from(ca)),
      nats,
      describe: { grpc: 'tls', nats: nats ? 'tls' : 'clear', ca: caSource },
    };
  }
  const issues: string[] = [];
  const grpcHost = grpcTargetHost(config.controlPlaneGrpc);
  if (grpcHost !== null && !isLoopbackHost(grpcHost)) {
    issues.push('SKIFF_CONTROL_PLANE_GRPC is beyond loopback: the agent reaches it only over TLS, with the control plane CA (SKIFF_CONTROL_PLANE_CA from the join command, or SKIFF_CA_FILE)');
  }
  if (!natsTls && natsRemote) {
    issues.push('SKIFF_NATS_URL is beyond loopback: the agent reaches it only over TLS, with the control plane CA (SKIFF_CONTROL_PLANE_CA from the join command, or SKIFF_CA_FILE)');
  }
  if (issues.length > 0) throw new ConfigError(issues);
  // A tls:// NATS of the operator's own, without our CA, is checked against the system's roots.
  return { grpc: credentials.createInsecure(), nats: undefined, describe: { grpc: 'clear', nats: natsTls ? 'tls' : 'clear', ca: 'none' } };
}
