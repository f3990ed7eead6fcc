/**
 * The agent channel's TLS material in `<dataDir>/tls/`: a CA made once per data directory
 * (ECDSA P-256, `ca.key` 0600, `ca.pem`, 20 years), which join commands carry and agents
 * pin, and the server certificate it signs for the control plane's gRPC server and for NATS
 * (`server.key` 0600, `server.pem`, 2 years), covering the names of `channelTlsNames`.
 * The server certificate is issued again when a name is missing from it, when it has under
 * 30 days left, or when the CA is not its issuer; the CA stays. Used by the control plane at
 * start and by tools/up before it starts NATS (tools/lib/channel-tls.ts).
 */
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from '@skiff/domain';

export interface ChannelTls {
  /** PEM texts. */
  ca: string;
  cert: string;
  key: string;
  /** Where they are: `ca.pem`, `server.pem`, `server.key`. */
  files: { ca: string; cert: string; key: string };
  /** The names the server certificate covers. */
  names: string[];
  /** What this call made: a new CA, a new server certificate. */
  issued: { ca: boolean; server: boolean };
}

const DAY_MS = 24 * 3600_000;
const CA_DAYS = 20 * 365;
const SERVER_DAYS = 2 * 365;
const RENEW_WITHIN_DAYS = 30;
const HOST_NAME = /^[a-z0-9]([a-z0-9_-]{0,62})(\.[a-z0-9_-]{1,63})*$/;
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/** The host of `host:port`, `[v6]:port` or `dns:///host:port`. */
function hostOfAddress(address: string): string {
  const rest = address.replace(/^dns:\/{0,3}/, '');
  if (rest.startsWith('[')) return rest.slice(1, rest.indexOf(']'));
  const colon = rest.lastIndexOf(':');
  return colon < 0 ? rest : rest.slice(0, colon);
}

/**
 * The names the server certificate must cover: loopback (127.0.0.1, ::1, localhost), this
 * host's name, and what the operator set: SKIFF_PUBLIC_IP, SKIFF_GRPC_HOST and
 * SKIFF_NATS_HOST (unless wildcards), and the hosts of SKIFF_AGENT_GRPC_ADDRESS and
 * SKIFF_AGENT_NATS_URL. Throws naming the variable whose host is not a host name or an IP.
 */
export function channelTlsNames(env: Readonly<Record<string, string | undefined>>, host = hostname()): string[] {
  const names = new Set(['127.0.0.1', '::1', 'localhost']);
  const add = (variable: string, value: string) => {
    const name = value.trim().toLowerCase().replace(/\.$/, '');
    if (WILDCARD_HOSTS.has(name)) return;
    if (isIP(name) === 0 && !HOST_NAME.test(name)) throw new Error(`${variable} does not name a host or an IP address`);
    names.add(name);
  };
  if (HOST_NAME.test(host.toLowerCase())) names.add(host.toLowerCase());
  const value = (v: string) => env[v]?.trim() ?? '';
  if (value('SKIFF_PUBLIC_IP')) add('SKIFF_PUBLIC_IP', value('SKIFF_PUBLIC_IP'));
  for (const v of ['SKIFF_GRPC_HOST', 'SKIFF_NATS_HOST']) if (value(v)) add(v, value(v).replace(/^\[(.*)\]$/, '$1'));
  if (value('SKIFF_AGENT_GRPC_ADDRESS')) add('SKIFF_AGENT_GRPC_ADDRESS', hostOfAddress(value('SKIFF_AGENT_GRPC_ADDRESS')));
  for (const url of value('SKIFF_AGENT_NATS_URL').split(',').filter((u) => u.trim() !== '')) {
    if (!URL.canParse(url.trim())) throw new Error('SKIFF_AGENT_NATS_URL is not a list of URLs');
    add('SKIFF_AGENT_NATS_URL', new URL(url.trim()).hostname.replace(/^\[(.*)\]$/, '$1'));
  }
  return [...names].sort();
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
function writeAtomically(file: string, text: string, mode: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, file);
}

const newKeyPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** The CA and a server certificate covering `names` in `dir`, made or renewed as needed (see the header). */
export function ensureChannelTls(dir: string, names: readonly string[], now = new Date()): ChannelTls {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = { caKey: join(dir, 'ca.key'), ca: join(dir, 'ca.pem'), key: join(dir, 'server.key'), cert: join(dir, 'server.pem'), names: join(dir, 'server-names.json') };
  const issued = { ca: false, server: false };

  if (!existsSync(files.caKey) || !existsSync(files.ca)) {
    const { privateKey, publicKey } = newKeyPair();
    const commonName = `Skiff agent channel CA ${now.toISOString().slice(0, 10)}`;
    const pem = issueCertificate({
      commonName,
      publicKey,
      issuer: { commonName, privateKey, publicKey },
      notBefore: new Date(now.getTime() - DAY_MS),
      notAfter: new Date(now.getTime() + CA_DAYS * DAY_MS),
      kind: { ca: true },
    });
    writeAtomically(files.caKey, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600);
    writeAtomically(files.ca, pem, 0o644);
    issued.ca = true;
  }
  const caPem = readFileSync(files.ca, 'utf8');
  const caCert = new X509Certificate(caPem);

  const current = (): string[] | null => {
    if (issued.ca || !existsSync(files.cert) || !existsSync(files.key) || !existsSync(files.names)) return null;
    const cert = new X509Certificate(readFileSync(files.cert, 'utf8'));
    if (!cert.verify(caCert.publicKey)) return null;
    if (new Date(cert.validTo).getTime() - now.getTime() < RENEW_WITHIN_DAYS * DAY_MS) return null;
    const covered = JSON.parse(readFileSync(files.names, 'utf8')) as string[];
    return names.every((n) => covered.includes(n)) ? covered : null;
  };
  let covered = current();
  if (!covered) {
    // Names covered before stay covered: tools/up and the control plane may know different ones.
    const before = existsSync(files.names) && !issued.ca ? (JSON.parse(readFileSync(files.names, 'utf8')) as string[]) : [];
    covered = [...new Set([...before, ...names])].sort();
    const caKey = createPrivateKey(readFileSync(files.caKey, 'utf8'));
    const { privateKey, publicKey } = newKeyPair();
    const pem = issueCertificate({
      commonName: 'skiff-control-plane',
      publicKey,
      issuer: { commonName: caCert.subject.split('\n').find((l) => l.startsWith('CN='))!.slice(3), privateKey: caKey, publicKey: createPublicKey(caKey) },
      notBefore: new Date(now.getTime() - DAY_MS),
      notAfter: new Date(now.getTime() + SERVER_DAYS * DAY_MS),
      kind: { serverNames: covered },
    });
    writeAtomically(files.key, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600);
    writeAtomically(files.cert, pem, 0o644);
    writeAtomically(files.names, JSON.stringify(covered) + '\n', 0o644);
    issued.server = true;
  }
  return {
    ca: caPem,
    cert: readFileSync(files.cert, 'utf8'),
    key: readFileSync(files.key, 'utf8'),
    files: { ca: files.ca, cert: files.cert, key: files.key },
    names: covered,
    issued,
  };
}
