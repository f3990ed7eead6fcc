import { describe, expect, it } from 'vitest';
import { pinGitRemote } from './git.js';
import type { Resolver } from './resolve.js';

const resolver: Resolver = async (host) => {
  const answers: Record<string, string[]> = {
    'git.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
    'inside.example.com': ['10.0.0.7'],
  };
  if (!answers[host]) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  return answers[host]!;
};
const REFUSE = { allowPrivate: false };
const ALLOW = { allowPrivate: true };
const NO_REDIRECTS = ['-c', 'http.followRedirects=false'];

describe('pinGitRemote', () => {
  it('pins an http(s) host to every checked address for curl, and follows no redirect', async () => {
    expect(await pinGitRemote('https://git.example.com/team/app.git', REFUSE, resolver)).toEqual({
      configArgs: ['-c', 'http.curloptResolve=git.example.com:443:93.184.216.34,[2606:2800:220:1::1]', ...NO_REDIRECTS],
      url: 'https://git.example.com/team/app.git',
      sshConfig: null,
    });
    expect((await pinGitRemote('http://GIT.example.com.:8080/a.git', REFUSE, resolver)).configArgs[1]).toBe('http.curloptResolve=git.example.com:8080:93.184.216.34,[2606:2800:220:1::1]');
  });

  it('gives git the address a numeric host spelling stands for, unpinned since it is a literal', async () => {
    expect(await pinGitRemote('http://2130706433:8080/a.git', ALLOW, resolver)).toEqual({ configArgs: NO_REDIRECTS, url: 'http://127.0.0.1:8080/a.git', sshConfig: null });
    await expect(pinGitRemote('http://0x7f.1/a.git', REFUSE, resolver)).rejects.toThrow('127.0.0.1: loopback addresses (127.0.0.0/8) are refused');
  });

  it('puts the checked address in a git:// URL', async () => {
    expect((await pinGitRemote('git://git.example.com/a.git', REFUSE, resolver)).url).toBe('git://93.184.216.34:9418/a.git');
    expect((await pinGitRemote('git://inside.example.com:9000/x/a.git', ALLOW, resolver)).url).toBe('git://10.0.0.7:9000/x/a.git');
  });

  it('pins an ssh host with an ssh_config of the name and the address only', async () => {
    expect(await pinGitRemote('git@git.example.com:team/app.git', REFUSE, resolver)).toEqual({
      configArgs: NO_REDIRECTS,
      url: 'git@git.example.com:team/app.git',
      sshConfig: 'Host git.example.com\n  HostName 93.184.216.34\n  HostKeyAlias git.example.com\n',
    });
    expect((await pinGitRemote('ssh://git@inside.example.com:2222/app.git', ALLOW, resolver)).sshConfig).toBe(
      'Host inside.example.com\n  HostName 10.0.0.7\n  HostKeyAlias inside.example.com\n',
    );
    expect((await pinGitRemote('ssh://git@127.0.0.1/app.git', ALLOW, resolver)).sshConfig).toBeNull();
  });

  it('refuses a host that resolves to a refused address, naming the address and the rule', async () => {
    await expect(pinGitRemote('git@inside.example.com:app.git', REFUSE, resolver)).rejects.toThrow(
      'inside.example.com resolves to 10.0.0.7: private addresses (10.0.0.0/8) are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)',
    );
    await expect(pinGitRemote('https://[fe80::1]/a.git', ALLOW, resolver)).rejects.toThrow(/link-local/);
    await expect(pinGitRemote('https://missing.example.com/a.git', ALLOW, resolver)).rejects.toThrow('missing.example.com does not resolve');
  });
});
