import type { Application } from '@skiff/db';
import { describe, expect, it } from 'vitest';
import { forkGitSource, previewApplication } from './preview-application.js';

const parent = {
  id: 'app_1', appName: 'web', sourceType: 'forgeD', forgeDBranch: 'main', branch: null, customGitBranch: null,
  env: 'sealed-env', previewEnv: 'sealed-preview-env', buildArgs: 'sealed-args', previewBuildArgs: 'sealed-preview-args',
  buildSecrets: 'sealed-secrets', previewBuildSecrets: null, replicas: 3, modeCluster: { Replicated: { Replicas: 3 } },
  rollbackActive: true, autoDeploy: true, isPreviewDeploymentsActive: true, buildType: 'containerfile', containerfile: 'Dockerfile',
} as unknown as Application;

describe('previewApplication', () => {
  it("takes the parent's build settings with the pull request's branch, its own name and id, and the preview variables", () => {
    const app = previewApplication(parent, { id: 'prv_1', appName: 'preview-web-abc123', branch: 'feature/x' });
    expect(app).toMatchObject({
      id: 'prv_1', appName: 'preview-web-abc123', forgeDBranch: 'feature/x', buildType: 'containerfile', containerfile: 'Dockerfile',
      env: 'sealed-preview-env', buildArgs: 'sealed-preview-args', buildSecrets: null, replicas: 1, modeCluster: null, rollbackActive: false,
    });
    expect(parent.forgeDBranch).toBe('main');
  });

  it('sets the branch column of the forge the parent builds from', () => {
    expect(previewApplication({ ...parent, sourceType: 'forgeA', branch: 'main' } as Application, { id: 'p', appName: 'n', branch: 'b' }).branch).toBe('b');
    expect(previewApplication({ ...parent, sourceType: 'git' } as Application, { id: 'p', appName: 'n', branch: 'b' }).customGitBranch).toBe('b');
  });
});

describe('forkGitSource', () => {
  const base = { url: 'https://github.com/acme/shop.git', branch: 'f', httpUsername: 'x-access-token', httpPassword: 'ghs_secret', sshPrivateKey: '', commit: '' };
  it("keeps the base's login for a fork on the same host, and drops it for any other host", () => {
    expect(forkGitSource(base, 'https://github.com/dave/shop.git')).toMatchObject({ url: 'https://github.com/dave/shop.git', httpUsername: 'x-access-token', httpPassword: 'ghs_secret' });
    for (const other of ['https://evil.example/dave/shop.git', 'http://github.com/dave/shop.git', 'https://github.com:8443/dave/shop.git', 'https://github.com.evil.example/x.git']) {
      expect(forkGitSource(base, other)).toMatchObject({ url: other, httpUsername: '', httpPassword: '', sshPrivateKey: '' });
    }
  });
});
