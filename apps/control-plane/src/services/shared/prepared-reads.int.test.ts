// The statements of every request and of the benchmarked reads (tools/bench) run on PostgreSQL
// as named prepared statements, a fixed number of them per connection whatever the data.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let applicationId: string;
let environmentId: string;
beforeAll(async () => {
  // One connection: the session `pg_prepared_statements` is read from prepared everything.
  t = await startTestPlatform({ database: 'postgres', poolSize: 1 });
  const { body } = await t.call('project.create', { name: 'prepared' });
  environmentId = body.environments[0].environmentId;
  applicationId = (await t.call('application.create', { name: 'prepared', environmentId })).body.applicationId;
  await t.call('domain.create', { host: 'prepared.example.com', applicationId });
}, 120_000);
afterAll(() => t?.close());

const prepared = async () =>
  (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by statement`.execute(t.db)).rows;

async function run(operation: string, input?: Record<string, unknown>) {
  const res = await t.call(operation, input);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

it("prepares the key's lookup, its last use, project.all's and application.one's statements under skiff_ names", async () => {
  const key = (await t.call('user.createApiKey', { name: 'fresh' })).body.key as string;
  t.watch.secret(key);
  const as = t.as(key);
  expect((await as('project.all')).status).toBe(200);
  expect((await as('application.one', { applicationId })).status).toBe(200);
  // The last use is written behind the request.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const statements = await prepared();
  const named = (pattern: RegExp) => statements.filter((s) => pattern.test(s.statement));
  for (const pattern of [/from "api_keys" as "k"/, /^update "api_keys" set "last_used_at"/, /where "p"."organization_id" = \$1/, /from "applications" as "s"/, /"environment_id" = any\(\$2\)/]) {
    expect(named(pattern), `${pattern} among\n${statements.map((s) => s.statement).join('\n')}`).toEqual([
      { name: expect.stringMatching(/^skiff_[0-9a-f]{32}$/), statement: expect.anything() },
    ]);
  }
});

it('project.all prepares no statement more with more projects (its reads are two texts whatever their number)', async () => {
  const reads = async () => (await prepared()).filter((s) => /"p"."organization_id" = \$1|= any\(/.test(s.statement)).map((s) => s.name);
  await run('project.all');
  const before = await reads();
  expect(before).toHaveLength(2);
  for (let i = 0; i < 5; i++) {
    const { body } = await t.call('project.create', { name: `more-${i}` });
    await t.call('environment.create', { projectId: body.projectId, name: 'staging' });
  }
  await run('project.all');
  expect(await reads()).toEqual(before);
});
