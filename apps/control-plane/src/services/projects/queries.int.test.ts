// Statements per request of the benchmarked operations (tools/bench): every round trip to the
// database is most of a request's cost.
import { PostgresQueryCompiler } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

describe.each(['postgres', 'pglite'] as const)('statements per request on %s', (database) => {
  let t: TestPlatform;
  const statements: string[] = [];
  beforeAll(async () => {
    t = await startTestPlatform({ database, onQuery: (sql) => statements.push(sql) });
  }, 120_000);
  afterAll(() => t?.close());

  /** The statements a call runs once its key is known (the key's lookup is cached). */
  async function counted(call: () => Promise<{ status: number }>) {
    await t.call('project.all');
    statements.length = 0;
    const res = await call();
    expect(res.status).toBe(200);
    // Not the request's own: the key's last use (written behind), and the audit log's prune,
    // which the first audited write starts in the background and may land in this window.
    return statements.filter((s) => !/^update "api_keys" set "last_used_at"|^delete from "audit_events"/.test(s));
  }

  it('project.one reads the project with its environments in one statement, their services in one more', async () => {
    const { body } = await t.call('project.create', { name: 'one-statement' });
    await t.call('environment.create', { projectId: body.projectId, name: 'staging' });
    const run = await counted(() => t.call('project.one', { projectId: body.projectId }));
    expect(run, run.join('\n')).toHaveLength(2);
  });

  it('project.all reads the projects with their environments in one statement, their services in one more, the same texts with 5 projects more', async () => {
    const texts = async () => {
      const run = await counted(() => t.call('project.all'));
      expect(run, run.join('\n')).toHaveLength(2);
      return run;
    };
    const one = await texts();
    for (let i = 0; i < 5; i++) await t.call('project.create', { name: `all-${i}` });
    expect(await texts()).toEqual(one);
  });

  it('application.one reads the application with its environment and project in one statement', async () => {
    const { body } = await t.call('project.create', { name: 'with-application' });
    const created = await t.call('application.create', { name: 'reads', environmentId: body.environments[0].environmentId });
    await t.call('domain.create', { host: `reads-${database}.example.com`, applicationId: created.body.applicationId });
    const run = await counted(() => t.call('application.one', { applicationId: created.body.applicationId }));
    expect(run, run.join('\n')).toHaveLength(1);
  });

  it('environment.one reads the environment with its project in one statement, its services in one more; environment.create its project in one', async () => {
    const { body } = await t.call('project.create', { name: 'environment-reads' });
    const run = await counted(() => t.call('environment.one', { environmentId: body.environments[0].environmentId }));
    expect(run, run.join('\n')).toHaveLength(2);
    const created = await counted(() => t.call('environment.create', { projectId: body.projectId, name: 'staging' }));
    expect(created.filter((s) => /^select/.test(s)), created.join('\n')).toEqual([expect.stringMatching(/^select "id", "organization_id"/)]);
  });

  it('project.one builds and compiles its statements once, not per request', async () => {
    const { body } = await t.call('project.create', { name: 'compiled-once' });
    await t.call('project.one', { projectId: body.projectId });
    const compile = vi.spyOn(PostgresQueryCompiler.prototype, 'compileQuery');
    try {
      const res = await t.call('project.one', { projectId: body.projectId });
      expect(res.body).toMatchObject({ projectId: body.projectId, environments: [{ name: 'production', services: [] }] });
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });

  it('project.create builds and compiles its statements once, the audit row\'s too (once per batch size)', async () => {
    await t.call('project.create', { name: 'compiled-once-1' });
    const compile = vi.spyOn(PostgresQueryCompiler.prototype, 'compileQuery');
    try {
      const audited = () => t.db.selectFrom('auditEvents').select('id').where('operation', '=', 'project.create').execute();
      const before = (await audited()).length;
      compile.mockClear();
      expect((await t.call('project.create', { name: 'compiled-once-2', description: null })).status).toBe(200);
      expect(compile).not.toHaveBeenCalled();
      expect(await audited()).toHaveLength(before + 1);
    } finally {
      compile.mockRestore();
    }
  });

  it('project.create makes its rows in one statement, and its audit row in one more', async () => {
    const run = await counted(() => t.call('project.create', { name: 'two-statements' }));
    expect(run.filter((s) => !/^insert into "audit_events"/.test(s))).toHaveLength(1);
    expect(run).toHaveLength(2);
  });
});
