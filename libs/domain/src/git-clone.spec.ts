import { describe, expect, it } from 'vitest';
import { GitSetupError, gitEnv, gitFailure, gitUrlSecrets, httpBasicEnv, httpLogin, sshKeyFileContent } from './git-clone.js';

describe('gitEnv', () => {
  it('keeps git away from the host configuration and offers only the given key', () => {
    const env = gitEnv({ home: '/tmp/h', sshKeyFile: '/tmp/h/id', knownHostsFile: '/data/known_hosts', path: '/usr/bin' });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/tmp/h',
      LANG: 'C.UTF-8',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: 'http:https:ssh:git',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_SSH_COMMAND:
        'ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=/data/known_hosts -i /tmp/h/id',
    });
    expect(gitEnv({ home: '/h', sshKeyFile: null, knownHostsFile: '/k' }).GIT_SSH_COMMAND).toMatch(/-o IdentityFile=none$/);
  });

  it('refuses paths ssh would split or interpret', () => {
    expect(() => gitEnv({ home: '/h', sshKeyFile: '/tmp/a b/id', knownHostsFile: '/k' })).toThrow(GitSetupError);
    expect(() => gitEnv({ home: '/h', sshKeyFile: null, knownHostsFile: '/k;rm' })).toThrow(GitSetupError);
  });
});

describe('httpBasicEnv', () => {
  it("gives a forge's login as an Authorization header for the URL's origin only, through git's environment", () => {
    expect(httpBasicEnv('https://gitlab.example.com:8443/acme/shop.git', 'oauth2', 'glpat-x')).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://gitlab.example.com:8443/.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('oauth2:glpat-x').toString('base64')}`,
    });
    expect(httpBasicEnv('git@github.com:acme/shop.git', 'x', 'y')).toBeNull();
    expect(httpBasicEnv('ssh://git@github.com/acme/shop.git', 'x', 'y')).toBeNull();
  });
});

describe('httpLogin and gitUrlSecrets', () => {
  it('moves an http login into a header for that origin only', () => {
    const login = httpLogin('https://user:p%40ss@git.example.com/a/b.git');
    expect(login).toEqual({
      url: 'https://git.example.com/a/b.git',
      env: {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'http.https://git.example.com/.extraHeader',
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('user:p@ss').toString('base64')}`,
      },
    });
    expect(httpLogin('https://git.example.com/a.git')).toBeNull();
    expect(httpLogin('git@git.example.com:a/b.git')).toBeNull();
    expect(gitUrlSecrets('https://user:p%40ss@git.example.com/a.git')).toEqual(['user', 'p%40ss', 'user', 'p@ss']);
    expect(gitUrlSecrets('ssh://git@host/a.git')).toEqual([]);
  });
});

describe('gitFailure and sshKeyFileContent', () => {
  it("names git's reason, with ssh's line before a remote read failure", () => {
    expect(gitFailure(['Cloning into x...', 'fatal: Remote branch nope not found in upstream origin'])).toBe('Remote branch nope not found in upstream origin');
    expect(gitFailure(['git@h: Permission denied (publickey).', 'fatal: Could not read from remote repository.', '', 'Please make sure…'])).toBe(
      'Could not read from remote repository: git@h: Permission denied (publickey).',
    );
    expect(gitFailure(['something odd'])).toBe('something odd');
    expect(gitFailure([])).toBeNull();
    expect(sshKeyFileContent('KEY')).toBe('KEY\n');
    expect(sshKeyFileContent('KEY\n')).toBe('KEY\n');
  });
});
