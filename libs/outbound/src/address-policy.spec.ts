import { describe, expect, it } from 'vitest';
import { addressProblem, readOutboundPolicy } from './address-policy.js';
import { normalHost } from './resolve.js';

const REFUSE = { allowPrivate: false };
const ALLOW = { allowPrivate: true };

describe('addressProblem', () => {
  it('takes public IPv4 and IPv6 addresses under either policy', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) {
      expect(addressProblem(address, REFUSE), address).toBeNull();
      expect(addressProblem(address, ALLOW), address).toBeNull();
    }
  });

  it('always refuses link-local, metadata, unspecified, multicast, broadcast and reserved addresses, naming the rule', () => {
    const table: [string, string][] = [
      ['169.254.169.254', 'cloud metadata addresses (169.254.169.254/32)'],
      ['100.100.100.200', 'cloud metadata addresses (100.100.100.200/32)'],
      ['fd00:ec2::254', 'cloud metadata addresses (fd00:ec2::254)'],
      ['169.254.1.1', 'link-local addresses (169.254.0.0/16)'],
      ['fe80::1', 'link-local addresses (fe80::/10)'],
      ['febf:ffff::1', 'link-local addresses (fe80::/10)'],
      ['0.0.0.0', 'unspecified ("this network") addresses (0.0.0.0/8)'],
      ['::', 'unspecified addresses (::)'],
      ['224.0.0.1', 'multicast addresses (224.0.0.0/4)'],
      ['ff02::1', 'multicast addresses (ff00::/8)'],
      ['255.255.255.255', 'the broadcast address (255.255.255.255/32)'],
      ['240.0.0.1', 'reserved addresses (240.0.0.0/4)'],
      // An IPv4 address inside an IPv6 one is judged as itself.
      ['::ffff:169.254.169.254', 'cloud metadata addresses (169.254.169.254/32, IPv4-mapped)'],
      ['::ffff:a9fe:101', 'link-local addresses (169.254.0.0/16, IPv4-mapped)'],
      ['64:ff9b::169.254.0.1', 'link-local addresses (169.254.0.0/16, NAT64)'],
      ['2002:a9fe:a9fe::1', 'cloud metadata addresses (169.254.169.254/32, 6to4)'],
    ];
    for (const [address, rule] of table) {
      expect(addressProblem(address, ALLOW), address).toBe(`${rule} are refused`);
      expect(addressProblem(address, REFUSE), address).toBe(`${rule} are refused`);
    }
  });

  it('refuses loopback, private and other non-public addresses unless the operator allows them', () => {
    const table: [string, string][] = [
      ['127.0.0.1', 'loopback addresses (127.0.0.0/8)'],
      ['127.255.0.9', 'loopback addresses (127.0.0.0/8)'],
      ['::1', 'loopback addresses (::1)'],
      ['10.1.2.3', 'private addresses (10.0.0.0/8)'],
      ['172.16.0.1', 'private addresses (172.16.0.0/12)'],
      ['172.31.255.255', 'private addresses (172.16.0.0/12)'],
      ['192.168.1.1', 'private addresses (192.168.0.0/16)'],
      ['100.64.0.1', 'shared (CGNAT) addresses (100.64.0.0/10)'],
      ['100.127.255.254', 'shared (CGNAT) addresses (100.64.0.0/10)'],
      ['192.0.0.8', 'IETF protocol addresses (192.0.0.0/24)'],
      ['198.18.0.1', 'benchmarking addresses (198.18.0.0/15)'],
      ['203.0.113.7', 'documentation addresses (203.0.113.0/24)'],
      ['fd12:3456::1', 'unique-local addresses (fc00::/7)'],
      ['fc00::1', 'unique-local addresses (fc00::/7)'],
      ['fec0::1', 'site-local addresses (fec0::/10)'],
      ['2001:db8::1', 'documentation addresses (2001:db8::/32)'],
      ['2001:0:4136:e378::1', 'Teredo addresses (2001::/32)'],
      ['100::1', 'discard addresses (100::/64)'],
      ['4000::1', 'addresses outside global unicast (2000::/3)'],
      ['::ffff:127.0.0.1', 'loopback addresses (127.0.0.0/8, IPv4-mapped)'],
      ['::ffff:7f00:1', 'loopback addresses (127.0.0.0/8, IPv4-mapped)'],
      ['::10.0.0.1', 'private addresses (10.0.0.0/8, IPv4-compatible)'],
      ['64:ff9b::192.168.0.1', 'private addresses (192.168.0.0/16, NAT64)'],
      ['2002:7f00:1::', 'loopback addresses (127.0.0.0/8, 6to4)'],
    ];
    for (const [address, rule] of table) {
      expect(addressProblem(address, REFUSE), address).toBe(`${rule} are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)`);
      expect(addressProblem(address, ALLOW), address).toBeNull();
    }
  });

  it('refuses what is not an IP address', () => {
    expect(addressProblem('localhost', ALLOW)).toMatch(/not IP addresses/);
  });
});

describe('normalHost', () => {
  it('reads numeric and odd spellings of a URL host as resolvers do', () => {
    const table: [string, string][] = [
      ['2130706433', '127.0.0.1'],
      ['0x7f.1', '127.0.0.1'],
      ['0177.0.0.1', '127.0.0.1'],
      ['017700000001', '127.0.0.1'],
      ['127.1', '127.0.0.1'],
      ['0xa9fea9fe', '169.254.169.254'],
      ['[::FFFF:127.0.0.1]', '::ffff:127.0.0.1'],
      ['Example.COM.', 'example.com'],
    ];
    for (const [host, normal] of table) expect(normalHost(host), host).toBe(normal);
    // As a URL names them (the WHATWG parser already normalised these).
    expect(addressProblem(normalHost(new URL('http://2130706433/').hostname), REFUSE)).toMatch(/^loopback/);
    expect(addressProblem(normalHost(new URL('http://0x7f.1/').hostname), REFUSE)).toMatch(/^loopback/);
    expect(addressProblem(normalHost(new URL('http://[::ffff:7f00:1]/').hostname), REFUSE)).toMatch(/^loopback.*IPv4-mapped/);
  });
});

describe('readOutboundPolicy', () => {
  it('reads the setting strictly, refusing private destinations by default', () => {
    expect(readOutboundPolicy(undefined)).toEqual({ allowPrivate: false });
    expect(readOutboundPolicy('')).toEqual({ allowPrivate: false });
    expect(readOutboundPolicy('0')).toEqual({ allowPrivate: false });
    expect(readOutboundPolicy(' 1 ')).toEqual({ allowPrivate: true });
    expect(readOutboundPolicy('TRUE')).toEqual({ allowPrivate: true });
    expect(() => readOutboundPolicy('yes')).toThrow('SKIFF_OUTBOUND_ALLOW_PRIVATE must be 1 or 0 (true or false): yes');
  });
});
