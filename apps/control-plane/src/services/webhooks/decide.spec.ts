import { describe, expect, it } from 'vitest';
import { decidePush, type DeploySettings } from './decide.js';
import { cloneAddress, readForgeEvent, readGenericEvent } from './payloads.js';
import { signatureFor, verifySignature } from './signatures.js';
import { firstWatchedFile } from './watch-paths.js';
import { previewAppName, previewHost } from './previews.js';

const settings = (over: Partial<DeploySettings> = {}): DeploySettings => ({ autoDeploy: true, branch: 'main', triggerType: 'push', watchPaths: null, ...over });
const githubPush = (ref: string, files: string[] = ['src/a.ts']) =>
  readForgeEvent('github', 'push', { ref, after: 'a'.repeat(40), repository: { full_name: 'acme/shop' }, commits: [{ added: [], modified: files, removed: [] }] });

describe('decidePush', () => {
  it('deploys a push on the configured branch, and says why not otherwise', () => {
    expect(decidePush(settings(), githubPush('refs/heads/main'))).toEqual({ deploy: true, reason: 'deployed: push to main' });
    expect(decidePush(settings(), githubPush('refs/heads/dev')).reason).toBe('ignored: branch dev is not main');
    expect(decidePush(settings({ autoDeploy: false }), githubPush('refs/heads/main')).reason).toBe('ignored: auto-deploy is off');
    expect(decidePush(settings(), githubPush('refs/tags/v1')).reason).toBe('ignored: tag v1: this workload deploys on pushes to main');
  });

  it('deploys tags only when triggerType is tag', () => {
    expect(decidePush(settings({ triggerType: 'tag' }), githubPush('refs/tags/v1.2'))).toEqual({ deploy: true, reason: 'deployed: tag v1.2' });
    expect(decidePush(settings({ triggerType: 'tag' }), githubPush('refs/heads/main')).deploy).toBe(false);
  });

  it('deploys on a watch-path hit only; a missing file list does not deploy', () => {
    const s = settings({ watchPaths: ['src/**', '!src/**/*.md'] });
    expect(decidePush(s, githubPush('refs/heads/main', ['README.md', 'src/x/y.ts'])).reason).toBe('deployed: push to main changed src/x/y.ts');
    expect(decidePush(s, githubPush('refs/heads/main', ['docs/a.ts', 'src/notes.md'])).reason).toBe(
      'ignored: no changed file matches the watch paths (src/**, !src/**/*.md)',
    );
    const bitbucket = readForgeEvent('bitbucket', 'repo:push', { repository: { full_name: 'acme/shop' }, push: { changes: [{ new: { type: 'branch', name: 'main', target: { hash: 'b'.repeat(40) } } }] } });
    expect(decidePush(s, bitbucket).reason).toMatch(/^ignored: the forge did not list changed files/);
  });

  it('ignores a deleted branch and events that are not pushes', () => {
    const deleted = readForgeEvent('github', 'push', { ref: 'refs/heads/main', after: '0'.repeat(40), deleted: true, commits: [] });
    expect(decidePush(settings(), deleted).reason).toBe('ignored: branch main was deleted');
    expect(decidePush(settings(), readForgeEvent('github', 'ping', {})).reason).toBe('ignored: ping event (the hook works)');
    expect(decidePush(settings(), readForgeEvent('github', 'issues', {})).reason).toBe('ignored: event issues does not deploy');
  });

  it('reads GitLab and Gitea pushes, and a bare generic call deploys', () => {
    const gitlab = readForgeEvent('gitlab', 'Push Hook', {
      object_kind: 'push', ref: 'refs/heads/main', checkout_sha: 'c'.repeat(40), after: 'c'.repeat(40),
      project: { id: 7, path_with_namespace: 'acme/shop' }, commits: [{ added: ['Dockerfile'], modified: [], removed: [] }],
    });
    expect(gitlab).toMatchObject({ kind: 'push', ref: 'main', repository: 'acme/shop', projectId: '7', changedFiles: ['Dockerfile'] });
    expect(readForgeEvent('gitea', 'push', { ref: 'refs/tags/v2', after: 'd'.repeat(40), repository: { full_name: 'acme/shop' } })).toMatchObject({ kind: 'tag', ref: 'v2' });
    expect(decidePush(settings(), readGenericEvent({}))).toEqual({ deploy: true, reason: 'deployed: webhook called' });
  });
});

describe('watch paths', () => {
  it('match at the root without a slash, at any depth with **/; overlong patterns never match', () => {
    expect(firstWatchedFile(['*.md'], ['docs/x.md'])).toBeNull();
    expect(firstWatchedFile(['**/*.md'], ['docs/x.md'])).toBe('docs/x.md');
    expect(firstWatchedFile(['.github/**'], ['.github/workflows/ci.yml'])).toBe('.github/workflows/ci.yml');
    expect(firstWatchedFile(['*'.repeat(11)], ['a'])).toBeNull();
  });

  it('stay fast on hostile globs and paths', () => {
    const start = performance.now();
    firstWatchedFile(['**/*a*a*a*a*a*b', '{a,b}/**/*.{x,y}'], Array.from({ length: 5000 }, () => `${'a/'.repeat(400)}a`));
    expect(performance.now() - start).toBeLessThan(5000);
  });
});

describe('signatures', () => {
  const body = '{"ref":"refs/heads/main"}';
  it.each(['github', 'gitlab', 'bitbucket', 'gitea'] as const)('%s: its own scheme verifies; another secret or body does not', (source) => {
    const sig = signatureFor(source, 's3cret', body);
    expect(verifySignature(source, 's3cret', body, sig)).toBe(true);
    expect(verifySignature(source, 'other', body, sig)).toBe(false);
    if (source !== 'gitlab') expect(verifySignature(source, 's3cret', `${body} `, sig)).toBe(false);
    expect(verifySignature(source, 's3cret', body, undefined)).toBe(false);
  });
  it('GitHub and Bitbucket carry sha256=, Gitea the bare hex', () => {
    expect(signatureFor('github', 'k', body)).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signatureFor('gitea', 'k', body)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('pull request events and preview names', () => {
  it('reads GitHub, GitLab and Bitbucket pull requests into one shape', () => {
    const github = readForgeEvent('github', 'pull_request', {
      action: 'synchronize', number: 4,
      pull_request: { id: 99, number: 4, title: 'Fix', html_url: 'https://github.com/acme/shop/pull/4', head: { ref: 'fix', sha: 'e'.repeat(40) }, user: { login: 'octocat' }, labels: [{ name: 'preview' }] },
      repository: { full_name: 'acme/shop' },
    });
    expect(github.pullRequest).toEqual({ action: 'updated', number: '4', id: '99', title: 'Fix', url: 'https://github.com/acme/shop/pull/4', headBranch: 'fix', headCommit: 'e'.repeat(40), fromFork: null, headCloneUrl: null, author: 'octocat', labels: ['preview'] });
    const gitlab = readForgeEvent('gitlab', 'Merge Request Hook', {
      object_kind: 'merge_request', project: { id: 7, path_with_namespace: 'acme/shop' },
      object_attributes: { id: 501, iid: 12, action: 'merge', source_project_id: 8, target_project_id: 7, title: 'MR', url: 'https://gitlab.example/acme/shop/-/merge_requests/12', source_branch: 'feat', last_commit: { id: 'f'.repeat(40) }, author_id: 31, source: { git_http_url: 'https://gitlab.example/fork/shop.git' } },
      labels: [{ id: 1, title: 'preview' }],
    });
    expect(gitlab.pullRequest).toMatchObject({ action: 'closed', number: '12', id: '501', headBranch: 'feat', fromFork: true, headCloneUrl: 'https://gitlab.example/fork/shop.git', author: '31', labels: ['preview'] });
    const bitbucket = readForgeEvent('bitbucket', 'pullrequest:created', {
      repository: { full_name: 'acme/shop' },
      pullrequest: { id: 3, title: 'BB', links: { html: { href: 'https://bitbucket.org/acme/shop/pull-requests/3' } }, source: { branch: { name: 'bb' }, commit: { hash: 'abc123' } }, author: { uuid: '{u-1}' } },
    });
    expect(bitbucket.pullRequest).toMatchObject({ action: 'opened', number: '3', url: 'https://bitbucket.org/acme/shop/pull-requests/3', headBranch: 'bb', headCommit: 'abc123', author: '{u-1}', labels: null });
  });

  it('reads a fork\'s clone address only as http(s) without credentials, query or fragment', () => {
    expect(cloneAddress('https://github.com/dave/shop.git')).toBe('https://github.com/dave/shop.git');
    for (const bad of ['ext::sh -c touch% /tmp/x', 'file:///etc', 'git@github.com:dave/shop.git', 'https://u:p@github.com/dave/shop.git', 'https://github.com/x.git?a=1', '--upload-pack=x', 7, null]) {
      expect(cloneAddress(bad)).toBeNull();
    }
  });

  it('names previews preview-<appName>-<6 hex> within 63 characters, under the wildcard', () => {
    expect(previewAppName('web', 'a1b2c3')).toBe('preview-web-a1b2c3');
    expect(previewAppName('x'.repeat(63), 'a1b2c3')).toHaveLength(63);
    expect(previewHost('*.Preview.Example.com', 'preview-web-a1b2c3')).toBe('preview-web-a1b2c3.preview.example.com');
    expect(previewHost(null, 'preview-web-a1b2c3')).toBeNull();
  });
});
