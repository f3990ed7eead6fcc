// ai.getModels, ai.suggest and ai.deploy against an HTTP sink on loopback that speaks the
// OpenAI API as its reference documents it (GET /v1/models, POST /v1/chat/completions with
// response_format json_schema, the error object on 401), and records every request.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseDotenv } from '@skiff/domain';
import { Command } from '@skiff/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

const KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
const WRONG_KEY = 'sk-wrong-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = { status: number; body: unknown };

/** An OpenAI-shaped API under /v1 that checks the bearer key and answers what the test sets. */
async function openAiSink() {
  const seen: Seen[] = [];
  const state = { chat: (): Answer => ({ status: 500, body: {} }) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const send = ({ status, body: out }: Answer) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      if (req.headers.authorization !== undefined && req.headers.authorization !== `Bearer ${KEY}`) {
        // OpenAI's 401 quotes part of the key; this one quotes all of it.
        return send({
          status: 401,
          body: { error: { message: `Incorrect API key provided: ${req.headers.authorization.slice(7)}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
        });
      }
      if (req.method === 'GET' && req.url === '/v1/models') {
        return send({
          status: 200,
          body: {
            object: 'list',
            data: [
              { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
              { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
            ],
          },
        });
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') return send(state.chat());
      if (req.url === '/slow/v1/models') return; // never answers
      if (req.url === '/big/v1/models') return send({ status: 200, body: { object: 'list', data: Array.from({ length: 500 }, (_, i) => ({ id: `model-${i}`, object: 'model' })) } });
      send({ status: 404, body: { error: { message: `Unknown request URL: ${req.method} ${req.url}`, type: 'invalid_request_error' } } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    state,
    apiUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A chat completion as the API answers one, its message content the given JSON. */
const completion = (content: unknown): Answer => ({
  status: 200,
  body: {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1741570283,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(content), refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1117, completion_tokens: 46, total_tokens: 1163 },
  },
});

const UMAMI = [
  'services:',
  '  umami:',
  '    image: ghcr.io/umami-software/umami:postgresql-v2.13.2',
  '    environment:',
  '      DATABASE_URL: postgresql://umami:${DB_PASSWORD}@db:5432/umami',
  '  db:',
  '    image: postgres:16.4',
  '    environment:',
  '      POSTGRES_PASSWORD: ${DB_PASSWORD}',
  '    volumes:',
  '      - db-data:/var/lib/postgresql/data',
  'volumes:',
  '  db-data: {}',
  '',
].join('\n');

const valid = {
  id: 'umami-postgres',
  name: 'Umami with Postgres',
  shortDescription: 'Privacy-friendly web analytics backed by Postgres.',
  dockerCompose: UMAMI,
  envVariables: 'DB_PASSWORD=9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  domains: [{ host: 'stats.example.com', port: 3000, serviceName: 'umami' }],
  configFiles: [],
};
const suggestions = {
  suggestions: [
    valid,
    { ...valid, id: 'broken', name: 'Broken', dockerCompose: 'services:\n  web:\n    image: [nginx\n' },
    { ...valid, id: 'privileged', name: 'Privileged', dockerCompose: 'services:\n  umami:\n    image: nginx:1.27\n    privileged: true\n' },
    { ...valid, id: 'elsewhere', name: 'Wrong service', domains: [{ host: 'x.example.com', port: 80, serviceName: 'nope' }] },
  ],
};

let t: TestPlatform;
let sink: Awaited<ReturnType<typeof openAiSink>>;
let env: string;
beforeAll(async () => {
  sink = await openAiSink();
  // The harness allows loopback, as SKIFF_OUTBOUND_ALLOW_PRIVATE=1 does.
  t = await startTestPlatform();
  t.watch.secret(KEY);
  t.watch.secret(WRONG_KEY);
  env = (await t.call('project.create', { name: 'ai' })).body.environments[0].environmentId;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});
beforeEach(() => {
  sink.seen.length = 0;
  sink.state.chat = () => completion(suggestions);
});

const configure = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('ai.create', { name: 'sink', apiUrl: sink.apiUrl, apiKey: KEY, model: 'gpt-4o-mini', isEnabled: true, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.aiId as string;
};

describe('ai.getModels', () => {
  it('lists the models of {apiUrl}/models with the key as bearer token (a trailing slash is fine)', async () => {
    const res = await t.call('ai.getModels', { apiUrl: `${sink.apiUrl}/`, apiKey: KEY });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual([
      { id: 'gpt-4o', ownedBy: 'system', created: 1715367049 },
      { id: 'gpt-4o-mini', ownedBy: 'system', created: 1721172741 },
    ]);
    expect(sink.seen).toHaveLength(1);
    expect(sink.seen[0]).toMatchObject({ method: 'GET', path: '/v1/models', body: '' });
    expect(sink.seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sink.seen[0]!.headers.accept).toBe('application/json');
  });

  it('sends no Authorization header for an endpoint without a key (a local server)', async () => {
    const res = await t.call('ai.getModels', { apiUrl: sink.apiUrl, apiKey: '' });
    expect(res.status).toBe(200);
    expect(sink.seen[0]!.headers).not.toHaveProperty('authorization');
  });

  it('says the provider refused the key, naming apiKey, without the key anywhere', async () => {
    const res = await t.call('ai.getModels', { apiUrl: sink.apiUrl, apiKey: WRONG_KEY });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['apiKey']);
    expect(res.body.message).toContain('the AI provider refused the API key (HTTP 401');
    expect(JSON.stringify(res.body)).not.toContain(WRONG_KEY);
    expect(t.logText()).not.toContain(WRONG_KEY);
  });

  it('says which URL is wrong when the endpoint has no /models', async () => {
    const res = await t.call('ai.getModels', { apiUrl: sink.apiUrl.replace(/\/v1$/, '/api'), apiKey: KEY });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['apiUrl']);
    expect(res.body.issues[0].message).toContain('HTTP 404');
  });

  it('refuses metadata and link-local addresses before connecting', async () => {
    for (const apiUrl of ['http://169.254.169.254/v1', 'http://metadata.google.internal/v1', 'http://[fe80::1]/v1']) {
      const res = await t.call('ai.getModels', { apiUrl, apiKey: KEY });
      expect(res.status, apiUrl).toBe(400);
      expect(res.body.issues[0].path).toEqual(['apiUrl']);
    }
  });
});

describe('ai.getModels where the operator allows no private addresses', () => {
  it('refuses loopback, saying how to allow it', async () => {
    const strict = await startTestPlatform({ outbound: { allowPrivate: false } });
    try {
      const res = await strict.call('ai.getModels', { apiUrl: sink.apiUrl, apiKey: KEY });
      expect(res.status).toBe(400);
      expect(res.body.issues[0].path).toEqual(['apiUrl']);
      expect(res.body.issues[0].message).toContain('SKIFF_OUTBOUND_ALLOW_PRIVATE=1');
      expect(sink.seen).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('ai.getModels within its deadline and size limit', () => {
  it('gives up on an endpoint that does not answer in time, and on an answer too large', async () => {
    const limited = await startTestPlatform({ ai: { modelsTimeoutMs: 300, maxBytes: 4096 } });
    try {
      const base = sink.apiUrl.replace(/\/v1$/, '');
      const slow = await limited.call('ai.getModels', { apiUrl: `${base}/slow/v1`, apiKey: KEY });
      expect(slow.status).toBe(400);
      expect(slow.body.issues[0]).toMatchObject({ path: ['apiUrl'], message: 'GET /models failed: no complete answer within 300 ms' });
      const big = await limited.call('ai.getModels', { apiUrl: `${base}/big/v1`, apiKey: KEY });
      expect(big.status).toBe(400);
      expect(big.body.issues[0]).toMatchObject({ path: ['apiUrl'], message: 'GET /models failed: the answer is larger than 4096 bytes' });
    } finally {
      await limited.close();
    }
  });
});

describe('ai.suggest', () => {
  it('asks the chat endpoint for structured suggestions and answers only those that deploy', async () => {
    const aiId = await configure();
    const res = await t.call('ai.suggest', { aiId, input: 'Web analytics with a Postgres database' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual([
      {
        id: 'umami-postgres',
        name: 'Umami with Postgres',
        description: 'Privacy-friendly web analytics backed by Postgres.',
        containerCompose: UMAMI,
        envVariables: valid.envVariables,
        domains: valid.domains,
        configFiles: [],
      },
    ]);

    // Why each of the others was left out: the compose file does not parse, uses host privileges, routes to no service.
    const dropped = t.logText().split('\n').filter((l) => l.includes('AI suggestions dropped')).map((l) => JSON.parse(l).dropped).at(-1);
    expect(dropped).toEqual([
      expect.stringMatching(/^suggestion 2 \(broken\): containerCompose: /),
      expect.stringMatching(/^suggestion 3 \(privileged\): containerCompose: .*privileged/),
      expect.stringMatching(/^suggestion 4 \(elsewhere\): domains: domains\[0\]: the compose file defines no service "nope"/),
    ]);

    expect(sink.seen).toHaveLength(1);
    const request = sink.seen[0]!;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers['content-type']).toBe('application/json');
    const body = JSON.parse(request.body);
    expect(Object.keys(body).sort()).toEqual(['messages', 'model', 'response_format']);
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.messages).toHaveLength(2);
    expect(body.messages[0]).toEqual({ role: 'system', content: expect.stringContaining('compose') });
    expect(body.messages[1]).toEqual({ role: 'user', content: 'Web analytics with a Postgres database' });
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'deployment_suggestions', strict: true } });
    const schema = body.response_format.json_schema.schema;
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['suggestions'] });
    expect(schema.properties.suggestions.items.required).toEqual(['id', 'name', 'shortDescription', 'dockerCompose', 'envVariables', 'domains', 'configFiles']);
  });

  it('says so when no suggestion is deployable', async () => {
    const aiId = await configure();
    sink.state.chat = () => completion({ suggestions: suggestions.suggestions.slice(1) });
    const res = await t.call('ai.suggest', { aiId, input: 'something' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['input']);
    expect(res.body.message).toContain('no deployable suggestion');
  });

  it('names what is wrong with the answer: not JSON, a refusal', async () => {
    const aiId = await configure();
    sink.state.chat = () => {
      const answer = completion({});
      (answer.body as { choices: { message: { content: string } }[] }).choices[0]!.message.content = 'Sure! Here is a compose file:';
      return answer;
    };
    const notJson = await t.call('ai.suggest', { aiId, input: 'a blog' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.issues[0]).toMatchObject({ path: ['aiId'], message: expect.stringContaining('did not answer JSON') });

    sink.state.chat = () => {
      const answer = completion({});
      const message = (answer.body as { choices: { message: { content: string | null; refusal: string | null } }[] }).choices[0]!.message;
      Object.assign(message, { content: null, refusal: "I'm sorry, I cannot help with that request." });
      return answer;
    };
    const refusal = await t.call('ai.suggest', { aiId, input: 'a blog' });
    expect(refusal.body.issues[0]).toMatchObject({ path: ['aiId'], message: "the model refused: I'm sorry, I cannot help with that request." });

    // A provider's error message is quoted, the key blanked out of it.
    sink.state.chat = () => ({ status: 400, body: { error: { message: `Invalid 'model' for key ${KEY}`, type: 'invalid_request_error', param: 'model', code: null } } });
    const upstream = await t.call('ai.suggest', { aiId, input: 'a blog' });
    expect(upstream.body.issues[0]).toMatchObject({ path: ['aiId'], message: "the AI provider answered HTTP 400 on /chat/completions: Invalid 'model' for key ***" });
  });

  it('says the provider refused the key, without it in the answer or the log', async () => {
    const aiId = await configure({ apiKey: WRONG_KEY });
    const res = await t.call('ai.suggest', { aiId, input: 'a blog' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0]).toMatchObject({ path: ['aiId'], message: expect.stringContaining('the AI provider refused the API key') });
    expect(JSON.stringify(res.body)).not.toContain(WRONG_KEY);
    expect(sink.seen[0]!.headers.authorization).toBe(`Bearer ${WRONG_KEY}`);
    expect(t.logText()).not.toContain(WRONG_KEY);
    expect(t.logText()).not.toContain(KEY);
  });

  it('refuses a disabled configuration and an empty request without calling the provider', async () => {
    const disabled = await configure({ isEnabled: false });
    expect((await t.call('ai.suggest', { aiId: disabled, input: 'a blog' })).body.issues[0].path).toEqual(['aiId']);
    const aiId = await configure();
    expect((await t.call('ai.suggest', { aiId, input: '   ' })).body.issues[0].path).toEqual(['input']);
    expect(sink.seen).toEqual([]);
  });

  it("answers NOT_FOUND for another organization's configuration, without calling it", async () => {
    const aiId = await configure();
    const other = await t.call('organization.create', { name: 'AI outsiders' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const res = await t.as(key)('ai.suggest', { aiId, input: 'a blog' });
    expect(res.status).toBe(404);
    expect(sink.seen).toEqual([]);
  });
});

describe('ai.deploy', () => {
  const deployInput = (overrides: Record<string, unknown> = {}) => ({
    environmentId: env,
    id: 'umami-postgres',
    name: 'Umami',
    description: 'Web analytics',
    containerCompose: UMAMI,
    envVariables: valid.envVariables,
    domains: [{ host: 'Stats.Example.com', port: 3000, serviceName: 'umami' }],
    ...overrides,
  });

  it('creates the stack with its env and domains and queues its deploy', async () => {
    const res = await t.call('ai.deploy', deployInput());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { compose, domains, deployment } = res.body;
    expect(compose).toMatchObject({ name: 'Umami', description: 'Web analytics', environmentId: env, serverId: null, sourceType: 'raw', composeFile: UMAMI });
    expect(compose.appName).toMatch(/^umami-[0-9a-f]{6}$/);
    expect(parseDotenv(compose.env).variables.get('DB_PASSWORD')).toBe('9f8e7d6c5b4a39281706f5e4d3c2b1a0');
    expect(domains).toHaveLength(1);
    expect(domains[0]).toMatchObject({ composeId: compose.composeId, host: 'stats.example.com', port: 3000, serviceName: 'umami', path: '/' });
    expect(deployment).toMatchObject({ composeId: compose.composeId, status: 'queued' });
    const command = await t.db.selectFrom('commands').select('kind').where('deploymentId', '=', deployment.deploymentId).executeTakeFirst();
    expect(command?.kind).toMatch(/DEPLOY_COMPOSE/);
  });

  it('keeps the config files with the stack, sealed, and sends them with its deploy', async () => {
    const compose = 'services:\n  web:\n    image: nginx:1.27\n    volumes:\n      - ./config/umami.conf:/etc/umami.conf:ro\n';
    const content = 'secret-ish=4f1c9a7e2b\n';
    const res = await t.call('ai.deploy', deployInput({ name: 'Umami files', containerCompose: compose, domains: [], configFiles: [{ filePath: './config/umami.conf', content }] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await t.db.selectFrom('composeStacks').select('configFiles').where('id', '=', res.body.compose.composeId).executeTakeFirstOrThrow();
    expect(row.configFiles).not.toContain('secret-ish');
    const command = await t.db.selectFrom('commands').select('payload').where('deploymentId', '=', res.body.deployment.deploymentId).executeTakeFirstOrThrow();
    const payload = Command.decode(new CommandOutbox(t.platform.secrets).open(command.payload)).payload;
    if (payload?.$case !== 'deployCompose') throw new Error(`not a DeployCompose: ${payload?.$case}`);
    expect(payload.value.configFiles).toEqual([{ path: 'config/umami.conf', content, target: '' }]);
  });

  it('refuses what would not deploy, naming the field, and leaves nothing behind', async () => {
    const stacks = async () => (await t.db.selectFrom('composeStacks').select('id').where('environmentId', '=', env).execute()).length;
    const before = await stacks();
    const refused = async (overrides: Record<string, unknown>, field: string) => {
      const res = await t.call('ai.deploy', deployInput(overrides));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
    };
    await refused({ containerCompose: 'services:\n  web:\n    image: [nginx\n' }, 'containerCompose');
    await refused({ containerCompose: 'services:\n  umami:\n    image: nginx:1.27\n    privileged: true\n' }, 'containerCompose');
    await refused({ envVariables: 'not a variable line' }, 'envVariables');
    await refused({ domains: [{ host: 'a.example.com', port: 80, serviceName: 'nope' }] }, 'domains');
    await refused({ domains: [{ host: 'https://a.example.com/', port: 80, serviceName: 'umami' }] }, 'domains');
    await refused({ configFiles: [{ filePath: '../outside.conf', content: 'A=1\n' }] }, 'configFiles');
    await refused({ configFiles: [{ filePath: '/etc/app.conf', content: 'A=1\n' }] }, 'configFiles');
    await refused({ configFiles: [{ filePath: '.env', content: 'A=1\n' }] }, 'configFiles');
    await refused({ configFiles: [{ filePath: 'a.conf', content: 'x' }, { filePath: './a.conf', content: 'y' }] }, 'configFiles');
    await refused({ configFiles: [{ filePath: 'big.conf', content: 'x'.repeat(256 * 1024 + 1) }] }, 'configFiles');
    // Per segment: a name over 255 bytes (the file system's limit), `.`/`..`, a backslash, NUL.
    await refused({ configFiles: [{ filePath: `conf/${'a'.repeat(256)}.conf`, content: 'A=1\n' }] }, 'configFiles');
    await refused({ configFiles: [{ filePath: `conf/${'é'.repeat(128)}`, content: 'A=1\n' }] }, 'configFiles');
    for (const filePath of ['conf/./a.conf', 'conf/../a.conf', 'conf\\a.conf', '//etc/a.conf']) {
      await refused({ configFiles: [{ filePath, content: 'A=1\n' }] }, 'configFiles');
    }
    const nul = await t.call('ai.deploy', deployInput({ configFiles: [{ filePath: 'conf/a\u0000.conf', content: 'A=1\n' }] }));
    expect(nul.status).toBe(400);
    expect(nul.body.issues[0].path[0]).toBe('configFiles');
    expect(await stacks()).toBe(before);
    expect((await t.call('ai.deploy', deployInput({ environmentId: 'env_missing' }))).status).toBe(404);
  });

  it('needs the right to create services in the environment', async () => {
    const member = t.as((await addMember(t, 'ai-deployer@example.com')).key);
    expect((await member('ai.deploy', deployInput({ domains: [] }))).status).toBe(403);
  });
});
