// The skiff program against a running control plane (real Postgres, the API served over
// HTTP on loopback), spawned as a child process with a temporary HOME.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { ServerType } from '@hono/node-server';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestPlatform, startTestPlatform } from '../../control-plane/src/testing/harness.js';
import { runCli } from './testing/run-cli.js';

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
