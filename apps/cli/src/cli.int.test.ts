// The skiff program against a running control plane (real Postgres, the API served over
// HTTP on loopback), spawned as a child process with a temporary HOME.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestPlatform, startTestPlatform } from '../../control-plane/src/testing/harness.js';
import { runCli } from './testing/run-cli.js';

/** Where bin/bundle.mjs writes the bundled CLI. */
const bundlePath = fileURLToPath(new URL('../../../dist/cli/skiff.mjs', import.meta.url));

let t: TestPlatform;
let server: ServerType;
let url: string;
let home: string;
let env: Record<string, string>;

const skiff = (args: string[], options: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}) =>
  runCli(args, { ...options, env: { ...env, ...options.env } });

beforeAll(async () => {
  t = await startTestPlatform();
  const port = await new Promise<number>((resolve) => {
    server = listen(t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
  });
  url = `http://127.0.0.1:${port}`;
  home = mkdtempSync(join(tmpdir(), 'skiff-cli-home-'));
  env = { HOME: home, SKIFF_URL: url, SKIFF_API_KEY: t.ownerKey };
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('operations from the contracts', () => {
  it('creates, lists and removes a project', async () => {
    const created = await skiff(['project', 'create', '--name', 'cli-shop', '--description', 'made by the CLI', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const project = JSON.parse(created.stdout);
    expect(project).toMatchObject({ name: 'cli-shop', description: 'made by the CLI' });
    const listed = await skiff(['project', 'all']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^PROJECTID\s+.*NAME/m);
    expect(listed.stdout).toContain('cli-shop');
    const removed = await skiff(['project', 'remove', '--project-id', project.projectId]);
    expect(removed.code, removed.stderr).toBe(0);
    const gone = await skiff(['project', 'one', '--project-id', project.projectId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/NOT_FOUND/);
  });

  it('takes lists as repeated flags or JSON, and the input from a file or stdin', async () => {
    const { stdout } = await skiff(['project', 'create', '--name', 'cli-lists', '--json']);
    const environmentId = JSON.parse(stdout).environments[0].environmentId;
    const app = JSON.parse((await skiff(['application', 'create', '--name', 'lists', '--environment-id', environmentId, '--json'])).stdout);
    const repeated = await skiff(['application', 'update', '--application-id', app.applicationId, '--args', '-c', '--args', 'echo hi', '--replicas', '2', '--auto-deploy', '--json']);
    expect(repeated.code, repeated.stderr).toBe(0);
    expect(JSON.parse(repeated.stdout)).toMatchObject({ args: ['-c', 'echo hi'], replicas: 2, autoDeploy: true });
    const json = await skiff(['application', 'update', '--application-id', app.applicationId, '--args', '["sh","-c"]', '--auto-deploy=false', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ args: ['sh', '-c'], autoDeploy: false });
    const fromStdin = await skiff(['application', 'update', '--input', '-', '--json'], { stdin: JSON.stringify({ applicationId: app.applicationId, replicas: 3 }) });
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ replicas: 3 });
  });

  it('checks the input before sending: a missing or mistyped field is exit 2 naming the field', async () => {
    const missing = await skiff(['project', 'create']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^\s+name: required$/m);
    const mistyped = await skiff(['application', 'update', '--application-id', 'app_x', '--replicas', 'two']);
    expect(mistyped.code).toBe(2);
    expect(mistyped.stderr).toMatch(/^\s+replicas: /m);
    const unknown = await skiff(['project', 'create', '--name', 'x', '--titel', 'y']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--titel: unknown option');
  });

  it("prints the server's BAD_REQUEST as the field and the reason, exit 1", async () => {
    const { stdout } = await skiff(['project', 'create', '--name', 'cli-dup', '--json']);
    const projectId = JSON.parse(stdout).projectId;
    const refused = await skiff(['environment', 'create', '--project-id', projectId, '--name', 'production']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/BAD_REQUEST/);
    expect(refused.stderr).toMatch(/^\s+name: .+/m);
  });

  it('shows help from the contract: fields, types, which are required', async () => {
    const help = await skiff(['environment', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Create an environment in a project');
    expect(help.stdout).toMatch(/--project-id\s+string, required/);
    expect(help.stdout).toMatch(/--description\s+string, optional/);
    const router = await skiff(['environment', '--help']);
    expect(router.stdout).toMatch(/^\s+create\s+POST/m);
  });

  it('exits 2 on usage errors and 3 when the server cannot be reached', async () => {
    expect((await skiff(['no-such-command'])).code).toBe(2);
    expect((await skiff(['project', 'nothing'])).code).toBe(2);
    expect((await skiff(['project', 'all'], { env: { SKIFF_URL: '', SKIFF_API_KEY: '' } })).code).toBe(2);
    const down = await skiff(['project', 'all'], { env: { SKIFF_URL: 'http://127.0.0.1:9' } });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    const clear = await skiff(['login', 'http://skiff.invalid:1', '--api-key-stdin'], { stdin: 'skf_x' });
    expect(clear.code).toBe(3);
    expect(clear.stderr).toContain('Warning: skiff.invalid:1 is not loopback and the URL is http');
  });
});

describe('contexts', () => {
  it('login stores the key 0600 in a 0700 folder, and no output shows it', async () => {
    const noOverride = { SKIFF_URL: '', SKIFF_API_KEY: '' };
    const login = await skiff(['login', url, '--name', 'local', '--api-key-stdin'], { env: noOverride, stdin: `${t.ownerKey}\n` });
    expect(login.code, login.stderr).toBe(0);
    const dir = join(home, '.config', 'skiff');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({ current: 'local', contexts: { local: { url, apiKey: t.ownerKey } } });
    const list = await skiff(['context', 'list'], { env: noOverride });
    const used = await skiff(['project', 'all', '--json'], { env: noOverride });
    expect(used.code, used.stderr).toBe(0);
    for (const r of [login, list, used]) expect(r.stdout + r.stderr).not.toContain(t.ownerKey);
    expect(list.stdout).toMatch(/\*\s+local\s+http:\/\/127\.0\.0\.1/);
    const wrong = await skiff(['login', url, '--name', 'bad', '--api-key-stdin'], { env: noOverride, stdin: 'skf_wrong' });
    expect(wrong.code).toBe(1);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).contexts)).toEqual(['local']);
    expect((await skiff(['context', 'remove', 'local'], { env: noOverride })).code).toBe(0);
    expect((await skiff(['project', 'all'], { env: noOverride })).code).toBe(2);
  });
});

describe('the key stays out of sight', () => {
  it('a config file and folder made wider by someone else are 0600/0700 again at the next write', async () => {
    const own = mkdtempSync(join(tmpdir(), 'skiff-cli-modes-'));
    try {
      const dir = join(own, '.config', 'skiff');
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ current: 'local', contexts: { local: { url, apiKey: t.ownerKey } } }), { mode: 0o644 });
      chmodSync(join(dir, 'config.json'), 0o644);
      const used = await skiff(['context', 'use', 'local', '--json'], { env: { HOME: own, SKIFF_URL: '', SKIFF_API_KEY: '' } });
      expect(used.code, used.stderr).toBe(0);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
      const listed = await skiff(['context', 'list', '--json'], { env: { HOME: own, SKIFF_URL: '', SKIFF_API_KEY: '' } });
      expect(JSON.parse(listed.stdout)).toEqual([{ current: true, name: 'local', url }]);
      for (const r of [used, listed]) expect(r.stdout + r.stderr).not.toContain(t.ownerKey);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('never prints the key in an error: one fetch refuses as a header, a proxy page echoing it', async () => {
    const secretPart = `skf_${'k'.repeat(12)}-not-shown`;
    // A key with a line break cannot be a header value: the HTTP client's message would quote it.
    const bad = await skiff(['project', 'all', '--json'], { env: { SKIFF_API_KEY: `${secretPart}\nx` } });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).not.toContain(secretPart);
    const login = await skiff(['login', url, '--name', 'nl', '--api-key-stdin', '--json'], { env: { SKIFF_URL: '', SKIFF_API_KEY: '' }, stdin: `${secretPart}\nx\n` });
    expect(login.code).not.toBe(0);
    expect(login.stdout + login.stderr).not.toContain(secretPart);
    // A proxy in front that answers its own page, quoting the request's headers.
    const proxy = createServer((req, res) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`bad gateway for ${JSON.stringify(req.headers)}`));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const echoed = await skiff(['project', 'all', '--json'], { env: { SKIFF_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, SKIFF_API_KEY: secretPart } });
      expect(echoed.code).toBe(1);
      expect(echoed.stderr).toContain('HTTP 502');
      expect(echoed.stdout + echoed.stderr).not.toContain(secretPart);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('workflows', () => {
  it('status lists workloads; env pull/push shows what changes and saves it', async () => {
    const { stdout } = await skiff(['project', 'create', '--name', 'cli-env', '--json']);
    const environmentId = JSON.parse(stdout).environments[0].environmentId;
    const app = JSON.parse((await skiff(['application', 'create', '--name', 'envy', '--environment-id', environmentId, '--json'])).stdout);
    await skiff(['application', 'update', '--application-id', app.applicationId, '--env', 'A=1\nB=2']);
    const status = await skiff(['status', 'cli-env']);
    expect(status.stdout).toMatch(/cli-env\s+production\s+application\s+envy\s+app_\S+\s+idle/);
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-env-'));
    try {
      const pulled = await skiff(['env', 'pull', app.applicationId, '--file', '.env'], { cwd: dir });
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('A=1\nB=2\n');
      expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
      // A file that was there, readable by others, is made private too.
      writeFileSync(join(dir, 'wide.env'), 'old\n', { mode: 0o644 });
      chmodSync(join(dir, 'wide.env'), 0o644);
      expect((await skiff(['env', 'pull', app.applicationId, '--file', 'wide.env'], { cwd: dir })).code).toBe(0);
      expect(statSync(join(dir, 'wide.env')).mode & 0o777).toBe(0o600);
      writeFileSync(join(dir, '.env'), 'A=1\nB=3\nC=secret-value\n');
      const dry = await skiff(['env', 'push', 'envy', '--dry-run'], { cwd: dir });
      expect(dry.stdout).toBe('~ B\n+ C\n');
      const pushed = await skiff(['env', 'push', 'envy'], { cwd: dir });
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(pushed.stdout + pushed.stderr).not.toContain('secret-value');
      expect(JSON.parse((await skiff(['application', 'one', '--application-id', app.applicationId, '--json'])).stdout).env).toBe('A=1\nB=3\nC=secret-value');
      expect((await skiff(['env', 'push', 'envy'], { cwd: dir })).stdout).toBe('No changes.\n');
      const tail = await skiff(['logs', 'envy', '--tail', 'all']);
      expect(tail.code).toBe(2);
      expect(tail.stderr).toContain('tail: a whole number of lines');
      const ambiguous = await skiff(['logs', 'nothing-by-that-name']);
      expect(ambiguous.code).toBe(1);
      expect(ambiguous.stderr).toContain('no application or compose or cache named or numbered "nothing-by-that-name"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('completion: scripts for bash and zsh, candidates from the contracts', async () => {
    const bash = await skiff(['completion', 'bash']);
    expect(bash.stdout).toContain('complete -o default -F _skiff_complete skiff');
    expect((await skiff(['completion', 'zsh'])).stdout).toContain('#compdef skiff');
    expect((await skiff(['__complete', 'proj'])).stdout.split('\n')).toContain('project');
    expect((await skiff(['__complete', 'project', 'cr'])).stdout).toBe('create\n');
    expect((await skiff(['__complete', 'environment', 'create', '--pro'])).stdout).toBe('--project-id\n');
    expect((await skiff(['completion', 'fish'])).code).toBe(2);
    expect(execFileSync('bash', ['-n'], { input: bash.stdout, encoding: 'utf8' })).toBe('');
  });
});

describe('export and apply', () => {
  it('exports without secret values; apply --dry-run lists changes and makes none; applying twice changes nothing', async () => {
    const created = JSON.parse((await skiff(['project', 'create', '--name', 'cli-decl', '--env', 'REGION=eu', '--json'])).stdout);
    const environmentId = created.environments[0].environmentId;
    const app = JSON.parse((await skiff(['application', 'create', '--name', 'web', '--environment-id', environmentId, '--source-type', 'container', '--json'])).stdout);
    await skiff(['application', 'update', '--application-id', app.applicationId, '--container-image', 'busybox:latest', '--replicas', '2', '--env', 'PORT=8080\nAPI_TOKEN=hunter2-secret']);
    const dom = await skiff(['domain', 'create', '--application-id', app.applicationId, '--host', 'cli-decl.localhost', '--port', '8080']);
    expect(dom.code, dom.stderr).toBe(0);

    const exported = await skiff(['export', 'cli-decl']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).not.toContain('hunter2-secret');
    expect(exported.stdout).not.toMatch(/app_|env_|prj_|dom_/);
    const file = parse(exported.stdout);
    expect(file.environments[0].applications[0]).toMatchObject({
      name: 'web',
      settings: { containerImage: 'busybox:latest', replicas: 2 },
      env: { PORT: '8080', API_TOKEN: null },
      domains: [{ host: 'cli-decl.localhost', port: 8080 }],
    });

    // The file, unchanged, against the project it came from: nothing to do.
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-apply-'));
    try {
      const same = join(dir, 'same.yaml');
      writeFileSync(same, exported.stdout);
      expect((await skiff(['apply', '-f', same])).stdout).toContain('No changes.');

      // A copy as a new project, with a staging environment and one more setting.
      file.project.name = 'cli-decl-copy';
      file.environments[0].applications[0].appName = `${file.environments[0].applications[0].appName}-copy`;
      file.environments[0].applications[0].domains[0].host = 'cli-decl-copy.localhost';
      file.environments[0].applications[0].env.API_TOKEN = 'set-in-file';
      file.environments.push({ name: 'staging', env: { DEBUG: '1' } });
      const copy = join(dir, 'copy.yaml');
      writeFileSync(copy, stringify(file));
      const dry = await skiff(['apply', '-f', copy, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('+ create project cli-decl-copy');
      expect(dry.stdout).toContain('+ create application web (production)');
      expect(dry.stdout).toContain('+ create domain cli-decl-copy.localhost/ of application web (production)');
      expect(dry.stdout).toContain('+ create environment staging');
      expect(dry.stdout).toContain('dry run, nothing changed');
      expect(JSON.parse((await skiff(['project', 'all', '--json'])).stdout).map((p: { name: string }) => p.name)).not.toContain('cli-decl-copy');

      const first = await skiff(['apply', '-f', copy]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/change\(s\) applied/);
      const second = await skiff(['apply', '-f', copy]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toContain('No changes.');
      const again = parse((await skiff(['export', 'cli-decl-copy'])).stdout);
      expect(again.environments.map((e: { name: string }) => e.name)).toEqual(['production', 'staging']);
      expect(again.environments[0].applications[0]).toMatchObject({ settings: { containerImage: 'busybox:latest', replicas: 2 }, domains: [{ host: 'cli-decl-copy.localhost' }] });

      // Something the file does not name is left, and said so.
      await skiff(['environment', 'create', '--project-id', created.projectId, '--name', 'extra']);
      const left = await skiff(['apply', '-f', same]);
      expect(left.stdout).toMatch(/Left as they are[^]*environment extra, not in the file/);
      expect(left.stdout).toContain('No changes.');

      // A file the platform would refuse changes nothing, naming the field.
      file.environments[0].applications[0].settings.replicas = 'many';
      writeFileSync(copy, stringify(file));
      const bad = await skiff(['apply', '-f', copy]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/environments\.0\.applications\.0\.replicas: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('help and suggestions', () => {
  it('--help lists the workflows and routers; a router lists its operations; a typo suggests the nearest, exit 2', async () => {
    const help = await skiff(['--help']);
    expect(help.code).toBe(0);
    for (const w of ['deploy', 'logs', 'env', 'export', 'apply', 'status']) expect(help.stdout).toMatch(new RegExp(`^  skiff ${w}\\b`, 'm'));
    for (const r of ['project', 'application', 'cache', 'dbA']) expect(help.stdout).toMatch(new RegExp(`\\b${r}\\b`));
    const router = await skiff(['cache', '--help']);
    expect(router.stdout).toMatch(/^\s+create\s+POST\s+Create a cache instance in an environment$/m);
    const typo = await skiff(['projcet', 'all']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "projcet"; did you mean "project"?');
    const workflow = await skiff(['statsu']);
    expect(workflow.stderr).toContain('did you mean "status"?');
    const operation = await skiff(['application', 'dropDeploymnt']);
    expect(operation.code).toBe(2);
    expect(operation.stderr).toContain('did you mean "dropDeployment"?');
  });
});

describe('start-up', () => {
  it('runs from the esbuild bundle (dist/cli/skiff.mjs); prints how long `skiff --help` takes', async () => {
    expect((await skiff(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(statSync(bundlePath).isFile()).toBe(true);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await skiff(['--help'])).code).toBe(0);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.log(`skiff --help: median ${Math.round(times[2]!)} ms, fastest ${Math.round(times[0]!)} ms over 5 runs (node start-up included)`);
  });
});

describe('operations that take a file', () => {
  it('--file sends it as multipart with the fields; a file over the limit is refused before sending', async () => {
    const environmentId = JSON.parse((await skiff(['project', 'create', '--name', 'cli-drop', '--json'])).stdout).environments[0].environmentId;
    const app = JSON.parse((await skiff(['application', 'create', '--name', 'site', '--environment-id', environmentId, '--source-type', 'drop', '--json'])).stdout);
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-drop-'));
    try {
      writeFileSync(join(dir, 'index.html'), 'hello from a drop\n');
      execFileSync('tar', ['-czf', join(dir, 'site.tar.gz'), '-C', dir, 'index.html']);
      const archive = join(dir, 'site.tar.gz');
      const help = await skiff(['application', 'dropDeployment', '--help']);
      expect(help.stdout).toContain('--file <path> sends it as the part `archive`');
      expect((await skiff(['__complete', 'application', 'dropDeployment', '--fi'])).stdout).toBe('--file\n');

      const missing = await skiff(['application', 'dropDeployment', '--application-id', app.applicationId]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/archive: required: give the file with --file/);
      const tooLarge = await skiff(['application', 'dropDeployment', '--application-id', app.applicationId, '--file', archive], { env: { SKIFF_MAX_ARCHIVE_BYTES: '10' } });
      expect(tooLarge.code).toBe(2);
      expect(tooLarge.stderr).toMatch(/archive: .*larger than the limit of 10 bytes .*nothing was sent/);
      expect(JSON.parse((await skiff(['deployment', 'all', '--application-id', app.applicationId, '--json'])).stdout)).toEqual([]);

      const sent = await skiff(['application', 'dropDeployment', '--application-id', app.applicationId, '--title', 'from the cli', '--file', archive, '--json']);
      expect(sent.code, sent.stderr).toBe(0);
      const deployment = JSON.parse(sent.stdout);
      expect(deployment).toMatchObject({ applicationId: app.applicationId, title: 'from the cli', status: 'queued' });
      const listed = JSON.parse((await skiff(['deployment', 'all', '--application-id', app.applicationId, '--json'])).stdout);
      expect(listed.map((d: { deploymentId: string }) => d.deploymentId)).toEqual([deployment.deploymentId]);

      // Not an archive: the server's refusal, naming the part.
      const notArchive = join(dir, 'notes.txt');
      writeFileSync(notArchive, 'plain text');
      const refused = await skiff(['application', 'dropDeployment', '--application-id', app.applicationId, '--file', notArchive]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^\s+archive: /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('export and apply, every kind', () => {
  it('applications, compose stacks, caches and databases round-trip to a new project; passwords never in the file', async () => {
    const call = async (args: string[]) => {
      const r = await skiff([...args, '--json']);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return JSON.parse(r.stdout);
    };
    const environmentId = (await call(['project', 'create', '--name', 'cli-kinds'])).environments[0].environmentId;
    const app = await call(['application', 'create', '--name', 'web', '--app-name', 'kinds-web', '--environment-id', environmentId, '--source-type', 'container']);
    await call([
      'application', 'update', '--application-id', app.applicationId, '--container-image', 'busybox:latest',
      '--env', 'PORT=8080', '--preview-env', 'PREVIEW=1\nPREVIEW_TOKEN=tok-hidden',
      '--build-args', 'NODE_ENV=production\nNPM_TOKEN=npm-hidden', '--preview-build-args', 'NODE_ENV=preview',
    ]);
    const stack = await call(['compose', 'create', '--name', 'stack', '--app-name', 'kinds-stack', '--environment-id', environmentId, '--compose-file', 'services:\n  web:\n    image: busybox:latest\n']);
    await call(['compose', 'update', '--compose-id', stack.composeId, '--env', 'LEVEL=debug']);
    await call(['domain', 'create', '--compose-id', stack.composeId, '--host', 'kinds-stack.localhost', '--service-name', 'web', '--port', '80']);
    const cache = await call(['cache', 'create', '--name', 'sessions', '--app-name', 'kinds-cache', '--environment-id', environmentId, '--database-password', 'cache-pass-hidden']);
    await call(['cache', 'update', '--cache-id', cache.cacheId, '--memory-limit', '268435456', '--env', 'REDIS_EXTRA=1']);
    const pg = await call(['dbA', 'create', '--name', 'orders', '--app-name', 'kinds-pg', '--environment-id', environmentId, '--database-name', 'orders', '--database-password', 'pg-pass-hidden']);
    await call(['dbA', 'update', '--db-a-id', pg.dbAId, '--memory-limit', '536870912']);
    await call(['dbD', 'create', '--name', 'events', '--app-name', 'kinds-mongo', '--environment-id', environmentId, '--replica-set']);

    const exported = await skiff(['export', 'cli-kinds']);
    expect(exported.code, exported.stderr).toBe(0);
    for (const secret of ['tok-hidden', 'npm-hidden', 'cache-pass-hidden', 'pg-pass-hidden', 'atabasePassword', 'rootPassword']) expect(exported.stdout).not.toContain(secret);
    expect(exported.stdout).not.toMatch(/app_|cmp_|cch_|dbs_|env_|prj_|dom_/);
    const file = parse(exported.stdout);
    const production = file.environments[0];
    expect(production.applications[0]).toMatchObject({
      previewEnv: { PREVIEW: '1', PREVIEW_TOKEN: null },
      buildArgs: { NODE_ENV: 'production', NPM_TOKEN: null },
      previewBuildArgs: { NODE_ENV: 'preview' },
    });
    expect(production.compose[0]).toMatchObject({ appName: 'kinds-stack', env: { LEVEL: 'debug' }, domains: [{ host: 'kinds-stack.localhost', serviceName: 'web', port: 80 }] });
    expect(production.caches[0]).toMatchObject({ appName: 'kinds-cache', settings: { memoryLimit: '268435456' }, env: { REDIS_EXTRA: '1' } });
    expect(production.databases).toEqual([
      expect.objectContaining({ appName: 'kinds-pg', engine: 'postgres', settings: expect.objectContaining({ databaseName: 'orders', memoryLimit: '536870912' }) }),
      expect.objectContaining({ appName: 'kinds-mongo', engine: 'mongo', settings: expect.objectContaining({ replicaSet: true }) }),
    ]);

    // The same file as a new project (new names: app names are unique on a server).
    const copy = structuredClone(file);
    copy.project.name = 'cli-kinds-copy';
    for (const list of ['applications', 'compose', 'caches', 'databases']) for (const w of copy.environments[0][list]) w.appName = `${w.appName}-copy`;
    copy.environments[0].compose[0].domains[0].host = 'kinds-stack-copy.localhost';
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-kinds-'));
    try {
      // Secret values are null in the export; the applied file gives them (they come back null).
      const filled = structuredClone(copy);
      filled.environments[0].applications[0].previewEnv.PREVIEW_TOKEN = 'tok-filled';
      filled.environments[0].applications[0].buildArgs.NPM_TOKEN = 'npm-filled';
      const path = join(dir, 'copy.yaml');
      writeFileSync(path, stringify(filled));
      const first = await skiff(['apply', '-f', path]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain('+ create cache sessions (production)');
      expect(first.stdout).toMatch(/a random databasePassword \(192 bits\) is generated; it is never shown/);
      expect(first.stdout).toContain('+ create database orders (production)');
      expect(first.stdout).toContain('the platform generates its passwords');
      const again = parse((await skiff(['export', 'cli-kinds-copy'])).stdout);
      expect(again).toEqual(copy);
      const second = await skiff(['apply', '-f', path]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toContain('No changes.');
      const copied = JSON.parse((await skiff(['status', 'cli-kinds-copy', '--json'])).stdout);
      const copiedCache = copied.find((w: { type: string }) => w.type === 'cache');
      expect((await call(['cache', 'one', '--cache-id', copiedCache.id])).hasDatabasePassword).toBe(true);

      // A password written into the file by hand is refused, naming it; nothing changes.
      filled.environments[0].caches[0].settings.databasePassword = 'in-the-file';
      writeFileSync(path, stringify(filled));
      const refused = await skiff(['apply', '-f', path]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/environments\.0\.caches\.0\.settings\.databasePassword: a secret is never in the file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
