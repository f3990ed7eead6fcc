import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { ServerType } from '@hono/node-server';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import pino from 'pino';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../testing/harness.js';
import { listen } from './serve.js';

// The checked-in document, as others use it: real validators, then a client generated from it.
const documentFile = fileURLToPath(new URL('../../../../docs/openapi.json', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * A client written against the generated types. It must type-check (its `@ts-expect-error`
 * lines prove the types are the document's, not `any`) and it runs against a live Skiff.
 */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function roundTrip(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': key } });
  const created = await client.POST('/api/project.create', { body: { name: 'generated-client', description: null } });
  if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
  const projectId: string = created.data.projectId;
  const listed = await client.GET('/api/project.all');
  const names: string[] = (listed.data ?? []).map((p) => p.name);
  const removed = await client.POST('/api/project.remove', { body: { projectId } });
  const after = await client.GET('/api/project.all');
  const refused = await client.GET('/api/project.one', { params: { query: { projectId } } });
  const code: 'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'INTERNAL_SERVER_ERROR' | 'NOT_IMPLEMENTED' | undefined = refused.error?.code;
  return { projectId, names, removed: removed.data?.project.projectId, after: (after.data ?? []).map((p) => p.projectId), code };
}

export function typeErrors(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error: project.create's \`name\` is a string
  void client.POST('/api/project.create', { body: { name: 42 } });
  // @ts-expect-error: a project has no field \`title\`
  void client.GET('/api/project.all').then((r) => r.data?.[0]?.title);
  // @ts-expect-error: project.remove requires \`projectId\`
  void client.POST('/api/project.remove', { body: {} });
  // @ts-expect-error: project.one is a GET operation
  void client.POST('/api/project.one', { body: { projectId: 'p' } });
  // @ts-expect-error: no such operation
  void client.GET('/api/project.nothing');
}
`;

describe('docs/openapi.json under real validators', () => {
  it('is valid for @apidevtools/swagger-parser', async () => {
    const api = await SwaggerParser.validate(documentFile);
    expect(Object.keys(api.paths ?? {}).length).toBeGreaterThan(200);
  });

  it('has no error under `redocly lint` (recommended rules); the one warning left is the missing license', async () => {
    const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin/cli.js');
    const run = await promisify(execFile)(process.execPath, [cli, 'lint', documentFile, '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.problems.map((p) => p.ruleId)).toEqual(['info-license']);
  }, 60_000);
});

describe('a client generated from it with openapi-typescript and openapi-fetch', () => {
  let t: TestPlatform;
  let server: ServerType;
  let baseUrl: string;
  let dir: string;
  beforeAll(async () => {
    t = await startTestPlatform();
    const port = await new Promise<number>((resolve) => {
      server = listen(t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) }, resolve);
    });
    baseUrl = `http://127.0.0.1:${port}`;
    dir = await mkdtemp(join(tmpdir(), 'skiff-openapi-client-'));
    await writeFile(join(dir, 'schema.d.ts'), astToString(await openapiTS(pathToFileURL(documentFile))));
    await writeFile(join(dir, 'client.ts'), CLIENT);
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('type-checks a client that uses the generated types (and refuses what the document does not allow)', () => {
    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
      paths: { 'openapi-fetch': [join(dirname(require.resolve('openapi-fetch')), 'index.d.mts')] },
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      return `${d.file?.fileName.slice(dir.length + 1)}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('creates, lists and removes a project through it, against a running Skiff', async () => {
    const js = ts.transpileModule(CLIENT, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    const file = join(dir, 'client.mjs');
    await writeFile(file, js.replace(/from 'openapi-fetch'/, `from ${JSON.stringify(pathToFileURL(require.resolve('openapi-fetch').replace(/\.cjs$/, '.mjs')).href)}`));
    const { roundTrip } = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as { roundTrip: (baseUrl: string, key: string) => Promise<any> };
    const result = await roundTrip(baseUrl, t.ownerKey);
    expect(result.projectId).toEqual(expect.any(String));
    expect(result.names).toContain('generated-client');
    expect(result.removed).toBe(result.projectId);
    expect(result.after).not.toContain(result.projectId);
    expect(result.code).toBe('NOT_FOUND');
  });
});
