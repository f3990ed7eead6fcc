// The pure parts of builds: command lines, refusals, log scrubbing, generated files (git URL
// and branch checks: libs/domain/src/git-remote.spec.ts).
import { BuildType } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { BuildLog, HIDDEN_LINE, redactUrlCredentials } from './build-log.js';
import { lineSplitter } from './child-process.js';
import { buildFailure, dockerBuildArgs, refuseBuildArgName } from './docker-build.js';
import { externalBuilderCommand } from './external-builders.js';
import { staticCaddyfile, staticContainerfile } from './static-site.js';

describe('docker build command', () => {
  it('names build args without their values and secrets by file', () => {
    expect(
      dockerBuildArgs({
        file: '/w/src/Dockerfile',
        context: '/w/src',
        target: 'runtime',
        buildArgs: { NODE: '20', API_KEY: 'secret-value' },
        secretFiles: { NPM_TOKEN: '/w/private/secret-0' },
        labels: { 'skiff.managed': 'true', 'skiff.id': 'app_1' },
        image: 'web:dep_1',
      }),
    ).toEqual([
      'build', '--progress=plain', '-f', '/w/src/Dockerfile', '--target', 'runtime',
      '--build-arg', 'API_KEY', '--build-arg', 'NODE',
      '--secret', 'id=NPM_TOKEN,src=/w/private/secret-0',
      '--label', 'skiff.id=app_1', '--label', 'skiff.managed=true',
      '-t', 'web:dep_1', '--', '/w/src',
    ]);
  });

  it('refuses build arg names the docker CLI reads from its environment', () => {
    expect(refuseBuildArgName('NODE_VERSION')).toBeNull();
    for (const name of ['PATH', 'HOME', 'DOCKER_HOST', 'BUILDKIT_PROGRESS', '1X', 'A-B', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'GLIBC_TUNABLES', 'GCONV_PATH', 'MALLOC_ARENA_MAX', 'GODEBUG', 'BUILDX_CONFIG', 'SSL_CERT_FILE', 'XDG_CONFIG_HOME', 'TMPDIR']) {
      expect(refuseBuildArgName(name), name).not.toBeNull();
    }
    for (const name of ['HTTP_PROXY', 'GOOGLE_API_KEY', 'GO_VERSION', 'NPM_CONFIG_REGISTRY']) expect(refuseBuildArgName(name), name).toBeNull();
  });

  it('refuses build arg names the shell that enters the build cap reads when /bin/sh is bash', () => {
    for (const name of ['SHELLOPTS', 'BASHOPTS', 'PS4', 'BASH_XTRACEFD', 'BASH_ENV', 'CDPATH', 'GLOBIGNORE']) expect(refuseBuildArgName(name), name).not.toBeNull();
  });

  it('finds the builder\'s reason at the end of its output', () => {
    expect(
      buildFailure([
        '#6 0.2 about to fail',
        '#6 ERROR: executor failed running [/bin/sh -c exit 7]: exit code: 7',
        '------',
        ' > [2/2] RUN exit 7:',
        '------',
        'error: failed to solve: executor failed running [/bin/sh -c exit 7]: exit code: 7',
      ]),
    ).toBe('failed to solve: executor failed running [/bin/sh -c exit 7]: exit code: 7');
    expect(buildFailure(['just one line'])).toBe('just one line');
    expect(buildFailure([])).toBeNull();
  });
});

describe('external builders', () => {
  const build = { dir: '/w/src', image: 'web:dep_1', buildArgs: { B: '2', A: '1' }, hasSecrets: false, builderVersion: '' };
  it('maps each build type to its program', () => {
    expect(externalBuilderCommand({ ...build, type: BuildType.BUILD_TYPE_PACK_ONE })).toEqual({
      program: 'nixpacks',
      args: ['build', '/w/src', '--name', 'web:dep_1', '--env', 'A', '--env', 'B'],
    });
    expect(externalBuilderCommand({ ...build, type: BuildType.BUILD_TYPE_PACK_TWO }).program).toBe('railpack');
    expect(externalBuilderCommand({ ...build, type: BuildType.BUILD_TYPE_LEGACY_BUILDPACKS, builderVersion: '22' }).args).toEqual([
      'build', 'web:dep_1', '--path', '/w/src', '--builder', 'heroku/builder:22', '--env', 'A', '--env', 'B',
    ]);
    expect(externalBuilderCommand({ ...build, type: BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS }).args).toContain('paketobuildpacks/builder-jammy-base');
  });
});

describe('build log', () => {
  it('hides lines with a secret (also a line of a multi-line one) and URL logins, in batches', async () => {
    const sent: string[][] = [];
    const log = new BuildLog(async (...lines) => void sent.push(lines), {
      secrets: ['tok-123', '-----BEGIN KEY-----\nAAAABBBBCCCC\n-----END KEY-----'],
      maxLines: 2,
      intervalMs: 10_000,
    });
    log.line('step 1');
    log.line('echo tok-123');
    log.line('AAAABBBBCCCC');
    log.line('fetching https://user:pa55@host/x.git');
    await log.close();
    expect(sent).toEqual([['step 1', HIDDEN_LINE], [HIDDEN_LINE, 'fetching https://***@host/x.git']]);
    expect(redactUrlCredentials('ssh://git@h/r and http://tok@h/r')).toBe('ssh://***@h/r and http://***@h/r');
  });

  it('splits output into lines, keeping the last state of \\r redraws', () => {
    const lines: string[] = [];
    const split = lineSplitter((l) => lines.push(l));
    split.push('Receiving objects:  10%\rReceiving objects: 100%, done.\nsecond');
    split.push(Buffer.from([0xc3]));
    split.push(Buffer.from([0xa9, 0x0a]));
    split.push('tail');
    split.end();
    expect(lines).toEqual(['Receiving objects: 100%, done.', 'secondé', 'tail']);
  });
});

describe('static site files', () => {
  it('serves /srv with caddy on port 80, with index.html for unknown paths only for single-page applications', () => {
    expect(staticContainerfile()).toBe(
      'FROM caddy:2\nCOPY Caddyfile /etc/caddy/Caddyfile\nCOPY site/ /srv/\nEXPOSE 80\nCMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]\n',
    );
    expect(staticCaddyfile({ spa: true })).toBe('{\n\tadmin off\n}\n\n:80 {\n\troot * /srv\n\tencode gzip\n\ttry_files {path} /index.html\n\tfile_server\n}\n');
    expect(staticCaddyfile({ spa: false })).not.toContain('try_files');
  });
});
