import { describe, expect, it } from 'vitest';
import { refuseGitBranch, refuseGitUrl } from './git-remote.js';
import { outboundHostProblem } from './outbound-url.js';

describe('refuseGitUrl', () => {
  it('takes http(s), ssh, git and scp-like URLs, with credentials and on loopback or private hosts', () => {
    for (const url of [
      'https://git.example.com/a/b.git',
      'http://u:p@127.0.0.1:8080/r.git',
      'ssh://git@host:2222/a/b.git',
      'ssh://root@127.0.0.1:2200/srv/repos/shop.git',
      'git://host/r.git',
      'git@github.com:acme/shop.git',
      'git@10.0.0.5:acme/shop.git',
      'https://[2001:db8::1]/r.git',
    ]) {
      expect(refuseGitUrl(url), url).toBeNull();
    }
  });

  it('refuses options, remote helpers, local paths and other transports', () => {
    expect(refuseGitUrl('--upload-pack=touch /tmp/x')).toBe('the git URL must not start with "-"');
    expect(refuseGitUrl('ext::sh -c id')).toBeTruthy();
    expect(refuseGitUrl('fd::3')).toBe('remote helper URLs (<transport>::…) are not allowed');
    expect(refuseGitUrl('file:///etc')).toBe('the file transport is not allowed (use http(s), ssh or git)');
    expect(refuseGitUrl('/srv/repo.git')).toBe('the git URL must be an http(s), ssh or git URL, or user@host:path');
    expect(refuseGitUrl('https://host/a b.git')).toBe('the git URL must not contain whitespace');
    expect(refuseGitUrl('')).toBe('the git URL is empty');
  });

  it('refuses link-local and cloud-metadata hosts, however they are spelled', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'https://169.254.1.1/r.git',
      'http://2852039166/r.git',
      'ssh://git@169.254.169.254/r.git',
      'ssh://git@2852039166/r.git',
      'git://0xa9.0xfe.0xa9.0xfe/r.git',
      'git@169.254.169.254:r.git',
      'git@0xa9fea9fe:r.git',
      'ssh://git@[fe80::1]/r.git',
      'https://[::ffff:169.254.169.254]/r.git',
    ]) {
      expect(refuseGitUrl(url), url).toMatch(/^the git URL's host is refused: link-local addresses/);
    }
    for (const url of ['http://metadata.google.internal/computeMetadata/v1', 'git@metadata.google.internal:x.git', 'ssh://git@Metadata.Google.Internal./x', 'http://100.100.100.200/x']) {
      expect(refuseGitUrl(url), url).toBe("the git URL's host is refused: cloud metadata addresses are refused");
    }
  });
});

describe('refuseGitBranch', () => {
  it('takes ref names and refuses options and what is not a ref name', () => {
    for (const b of ['main', 'release/2.1', 'feature/x-y_z', 'v1.0#hotfix']) expect(refuseGitBranch(b), b).toBeNull();
    expect(refuseGitBranch('-x')).toBe('the branch must not start with "-"');
    expect(refuseGitBranch('--upload-pack=x')).toBe('the branch must not start with "-"');
    for (const b of ['a..b', 'a b', 'a:b', 'a~1', 'a^', 'x@{1}', 'a*', 'a?', 'a[b', 'a\\b', 'a\u0001']) {
      expect(refuseGitBranch(b), b).toBe(`"${b}" is not a valid branch name`);
    }
    expect(refuseGitBranch('')).toBe('the branch is empty');
  });
});

describe('outboundHostProblem', () => {
  it('judges bare hosts as a URL host is judged', () => {
    expect(outboundHostProblem('git.example.com')).toBeNull();
    expect(outboundHostProblem('127.0.0.1')).toBeNull();
    expect(outboundHostProblem('[fe80::1]')).toMatch(/link-local/);
    expect(outboundHostProblem('fe80::1%eth0')).toMatch(/link-local/);
    expect(outboundHostProblem('169.254.43518')).toMatch(/link-local/);
    expect(outboundHostProblem('instance-data.')).toMatch(/metadata/);
    expect(outboundHostProblem('')).toBe('must name a host');
  });
});
