import { describe, expect, it } from 'vitest';
import { checkRoutePath, commonNameOf, dnsNamesOf, generatedHost, hostCoveredBy, isPublicIPv4, normalizeHost } from './hosts.js';

const host = (s: string) => normalizeHost(s);

describe('normalizeHost', () => {
  it('lower-cases, trims and drops one trailing dot', () => {
    expect(host('  Shop.Example.COM. ')).toEqual({ ok: true, value: 'shop.example.com' });
    expect(host('localhost')).toEqual({ ok: true, value: 'localhost' });
    expect(host('203.0.113.7')).toEqual({ ok: true, value: '203.0.113.7' });
  });

  it('keeps a leading wildcard over two labels or more', () => {
    expect(host('*.Example.com')).toEqual({ ok: true, value: '*.example.com' });
    expect(host('*.com').ok).toBe(false);
    expect(host('a.*.example.com').ok).toBe(false);
    expect(host('*example.com').ok).toBe(false);
    expect(host('*').ok).toBe(false);
  });

  it('turns international names into punycode', () => {
    expect(host('Bücher.example')).toEqual({ ok: true, value: 'xn--bcher-kva.example' });
  });

  it('refuses schemes, paths, ports and user info with a reason saying where they belong', () => {
    expect(host('https://shop.example.com')).toMatchObject({ ok: false, reason: expect.stringContaining('scheme') });
    expect(host('shop.example.com/api')).toMatchObject({ ok: false, reason: expect.stringContaining('path') });
    expect(host('shop.example.com:8080')).toMatchObject({ ok: false, reason: expect.stringContaining('port') });
    expect(host('user@shop.example.com')).toMatchObject({ ok: false, reason: expect.stringContaining('user info') });
  });

  it('refuses labels that are not DNS labels', () => {
    for (const bad of ['', ' ', 'shop..example.com', '-shop.example.com', 'shop-.example.com', 'sh_op.example.com', 'shop example.com', `${'a'.repeat(64)}.com`, 'a$b.com', '.example.com']) {
      expect(host(bad).ok, bad).toBe(false);
    }
    expect(host(`${'a'.repeat(63)}.com`).ok).toBe(true);
    const long = Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.');
    expect(host(long)).toMatchObject({ ok: false, reason: expect.stringContaining('253') });
  });
});

describe('checkRoutePath', () => {
  it('accepts paths starting with /', () => {
    for (const p of ['/', '/api', '/api/v1/', '/a-b_c.d~e']) expect(checkRoutePath(p).ok, p).toBe(true);
  });
  it('refuses relative paths, queries, fragments, spaces and dot segments', () => {
    for (const p of ['', 'api', '/api?x=1', '/api#top', '/a b', '/a/../b', '/..', '/./a', '/a\\b', '/a\nb']) {
      expect(checkRoutePath(p).ok, p).toBe(false);
    }
  });
});

describe('hostCoveredBy', () => {
  it('matches exact names and one-label wildcards', () => {
    expect(hostCoveredBy('shop.example.com', ['shop.example.com'])).toBe(true);
    expect(hostCoveredBy('Shop.Example.com', ['*.example.com'])).toBe(true);
    expect(hostCoveredBy('a.b.example.com', ['*.example.com'])).toBe(false);
    expect(hostCoveredBy('example.com', ['*.example.com'])).toBe(false);
    expect(hostCoveredBy('*.example.com', ['*.example.com'])).toBe(true);
    expect(hostCoveredBy('*.example.com', ['a.example.com'])).toBe(false);
    expect(hostCoveredBy('evil-example.com', ['*.example.com'])).toBe(false);
    expect(hostCoveredBy('shop.example.com', [])).toBe(false);
  });
});

describe('isPublicIPv4', () => {
  it('accepts globally reachable addresses only', () => {
    for (const ip of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1']) expect(isPublicIPv4(ip), ip).toBe(true);
    for (const ip of ['10.0.0.1', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '192.0.2.1', '203.0.113.5', '198.18.0.1', '224.0.0.1', '255.255.255.255', '::1', 'example.com', '1.2.3']) {
      expect(isPublicIPv4(ip), ip).toBe(false);
    }
  });
});

describe('generatedHost', () => {
  it('builds <appName>-<suffix>-<ip with dashes>.sslip.io', () => {
    expect(generatedHost('shop-web', '93.184.216.34', 'a1b2c3')).toEqual({ ok: true, value: 'shop-web-a1b2c3-93-184-216-34.sslip.io' });
  });
  it('makes the app name a DNS label within 63 characters', () => {
    expect(generatedHost('Shop_Web.v2', '8.8.8.8', 'abcdef')).toEqual({ ok: true, value: 'shop-web-v2-abcdef-8-8-8-8.sslip.io' });
    const long = generatedHost('x'.repeat(63), '255.255.255.255', 'abcdef');
    expect(long.ok).toBe(true);
    if (long.ok) expect(long.value.split('.')[0]).toHaveLength(63);
    expect(generatedHost('___', '8.8.8.8', 'abcdef').ok).toBe(false);
    expect(generatedHost('shop', '::1', 'abcdef').ok).toBe(false);
  });
});

describe('certificate names', () => {
  it('reads DNS names from a subjectAltName, skipping other kinds', () => {
    expect(dnsNamesOf('DNS:Shop.example.com, DNS:*.example.com, IP Address:127.0.0.1, email:a@b.c')).toEqual(['shop.example.com', '*.example.com']);
    expect(dnsNamesOf('DNS:"odd, name.example", DNS:b.example')).toEqual(['odd, name.example', 'b.example']);
    expect(dnsNamesOf(undefined)).toEqual([]);
  });
  it('reads the common name of a distinguished name', () => {
    expect(commonNameOf('C=DE\nO=Shop\nCN=shop.example.com')).toBe('shop.example.com');
    expect(commonNameOf('O=Shop')).toBeNull();
  });
});
