import { describe, expect, it } from 'vitest';
import { ipv6Groups, isServerAddress, outboundUrlProblem } from './outbound-url.js';

describe('outboundUrlProblem', () => {
  it('takes ordinary http(s) endpoints, loopback and private ones included', () => {
    for (const url of [
      'https://api.openai.com/v1',
      'http://localhost:11434/v1',
      'http://127.0.0.1:8080',
      'http://10.0.0.5/v1',
      'https://[2001:db8::1]/api',
      'https://gitlab.example.com',
    ]) {
      expect(outboundUrlProblem(url), url).toBeNull();
    }
  });

  it('refuses what is not an http(s) URL', () => {
    expect(outboundUrlProblem('not a url')).toBe('must be a URL');
    expect(outboundUrlProblem('file:///etc/passwd')).toBe('must be an http(s) URL');
    expect(outboundUrlProblem('gopher://example.com')).toBe('must be an http(s) URL');
    expect(outboundUrlProblem('https://user:pw@example.com')).toBe('must not carry credentials');
  });

  it('refuses link-local addresses however they are spelled', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://169.254.1.1:8080',
      'http://2852039166/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://[fe80::1]/',
      'http://[febf:ffff::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::169.254.169.254]/',
    ]) {
      expect(outboundUrlProblem(url), url).toMatch(/link-local/);
    }
    expect(outboundUrlProblem('http://[fec0::1]/')).toBeNull();
  });

  it('refuses cloud metadata names and addresses', () => {
    for (const url of [
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.google.internal./',
      'http://100.100.100.200/latest/meta-data',
      'http://[fd00:ec2::254]/',
    ]) {
      expect(outboundUrlProblem(url), url).toMatch(/metadata/);
    }
  });
});

describe('ipv6Groups', () => {
  it('expands compressed forms and dotted IPv4 tails', () => {
    expect(ipv6Groups('fe80::1')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(ipv6Groups('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Groups('2001:db8:1:2:3:4:5:6')).toEqual([0x2001, 0xdb8, 1, 2, 3, 4, 5, 6]);
  });
});

describe('isServerAddress', () => {
  it('takes IPv4, IPv6 and host names', () => {
    for (const a of ['203.0.113.7', '2001:db8::7', 'node-1.example.com', 'worker1', 'a.b.c.']) {
      expect(isServerAddress(a), a).toBe(true);
    }
  });
  it('refuses anything else', () => {
    for (const a of ['', 'http://host', 'host name', '-bad.example.com', 'bad-.example.com', 'a..b', 'x'.repeat(64), 'host;rm -rf /', '[::1]', '10.1', '1.2.3', '999']) {
      expect(isServerAddress(a), a).toBe(false);
    }
  });
});
