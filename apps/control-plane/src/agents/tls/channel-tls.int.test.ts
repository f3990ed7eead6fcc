import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { channelTlsNames, ensureChannelTls } from './channel-tls.js';
import { ipBytes } from '@skiff/domain';

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-tls-'));
  dirs.push(dir);
  return join(dir, 'tls');
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Whether a TLS client trusting `ca` completes a handshake (identity checked) with a server using `cert`/`key` on 127.0.0.1. */
async function handshake(server: { cert: string; key: string }, ca: string): Promise<true | string> {
  const srv = createServer({ cert: server.cert, key: server.key }, (s) => s.end('ok'));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  try {
    return await new Promise<true | string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ca }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', (err) => resolve(err.message));
    });
  } finally {
    srv.close();
  }
}

describe('the agent channel CA', () => {
  const names = channelTlsNames({ SKIFF_PUBLIC_IP: '203.0.113.7', SKIFF_AGENT_GRPC_ADDRESS: 'cp.example.com:50051', SKIFF_AGENT_NATS_URL: 'tls://[2001:db8::1]:4222' }, 'Box-1');

  it('names loopback, the host, the public IP and the agents’ addresses', () => {
    expect(names).toEqual(['127.0.0.1', '2001:db8::1', '203.0.113.7', '::1', 'box-1', 'cp.example.com', 'localhost']);
    expect(() => channelTlsNames({ SKIFF_AGENT_GRPC_ADDRESS: 'bad host!:1' })).toThrow(/SKIFF_AGENT_GRPC_ADDRESS/);
    expect(channelTlsNames({ SKIFF_GRPC_HOST: '0.0.0.0', SKIFF_NATS_HOST: '10.0.0.5' }, 'h')).toContain('10.0.0.5');
  });

  it('is made once, its key private, and signs a server certificate for those names', async () => {
    const dir = freshDir();
    const tls = ensureChannelTls(dir, names);
    expect(tls.issued).toEqual({ ca: true, server: true });
    expect(statSync(join(dir, 'ca.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'server.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'ca.pem')).mode & 0o777).toBe(0o644);

    const ca = new X509Certificate(tls.ca);
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const cert = new X509Certificate(tls.cert);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkHost('cp.example.com')).toBe('cp.example.com');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkIP('::1')).toBe('::1');
    expect(cert.checkIP('2001:db8::1')).toBe('2001:db8::1');
    expect(cert.checkIP('203.0.113.7')).toBe('203.0.113.7');
    expect(cert.checkIP('203.0.113.8')).toBeUndefined();

    expect(await handshake(tls, tls.ca)).toBe(true);
    const other = ensureChannelTls(freshDir(), names);
    expect(await handshake(tls, other.ca)).not.toBe(true);

    const again = ensureChannelTls(dir, names);
    expect(again.issued).toEqual({ ca: false, server: false });
    expect(again.cert).toBe(tls.cert);
  });

  it('issues the server certificate again when a name is added or it nears its end; the CA stays', () => {
    const dir = freshDir();
    const first = ensureChannelTls(dir, names);
    const more = ensureChannelTls(dir, [...names, 'new.example.com']);
    expect(more.issued).toEqual({ ca: false, server: true });
    expect(more.ca).toBe(first.ca);
    expect(new X509Certificate(more.cert).checkHost('new.example.com')).toBe('new.example.com');
    // Names covered before stay covered.
    expect(ensureChannelTls(dir, ['127.0.0.1']).issued.server).toBe(false);
    const late = ensureChannelTls(dir, names, new Date(Date.now() + 720 * 24 * 3600_000));
    expect(late.issued).toEqual({ ca: false, server: true });
  });

  it('writes IP addresses as their bytes', () => {
    expect(ipBytes('::1').toString('hex')).toBe('0'.repeat(31) + '1');
    expect(ipBytes('2001:db8::1:2').toString('hex')).toBe('20010db8000000000000000000010002');
    expect(ipBytes('::ffff:1.2.3.4').toString('hex')).toBe('00000000000000000000ffff01020304');
    expect(ipBytes('10.0.0.5').toString('hex')).toBe('0a000005');
  });
});
