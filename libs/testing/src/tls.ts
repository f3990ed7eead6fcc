import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from '@skiff/domain';

/** A CA and a server certificate it signed, as PEM texts and files (the control plane makes its own with agents/tls/channel-tls.ts). */
export interface TestTls {
  ca: string;
  cert: string;
  key: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  remove: () => void;
}

/** A fresh CA (ECDSA P-256) and a server certificate for `names` (loopback by default), in a temporary folder. */
export function makeTestTls(names: readonly string[] = ['127.0.0.1', '::1', 'localhost']): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-test-tls-'));
  const now = Date.now();
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const issuer = { commonName: 'Skiff test CA', ...caKeys };
  const validity = { notBefore: new Date(now - 3600_000), notAfter: new Date(now + 7 * 24 * 3600_000) };
  const ca = issueCertificate({ commonName: issuer.commonName, publicKey: caKeys.publicKey, issuer, ...validity, kind: { ca: true } });
  const serverKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const cert = issueCertificate({ commonName: 'skiff-test-server', publicKey: serverKeys.publicKey, issuer, ...validity, kind: { serverNames: names } });
  const key = serverKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const files = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
  writeFileSync(files.caFile, ca);
  writeFileSync(files.certFile, cert);
  writeFileSync(files.keyFile, key, { mode: 0o600 });
  return { ca, cert, key, ...files, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
