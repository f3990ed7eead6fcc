import { freshDatabase } from '@skiff/testing';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DatabaseHandle, directQueryOf, openDatabase } from './database.js';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let handle: DatabaseHandle;
const broken: Error[] = [];

beforeAll(async () => {
  fresh = await freshDatabase(inject('postgresUrl'));
  handle = await openDatabase({ url: fresh.url, poolSize: 2, onIdleConnectionError: (err) => broken.push(err) });
});
afterAll(async () => {
  await handle?.close();
  await fresh?.drop();
});

describe('the Postgres pool', () => {
  it('survives an idle connection the server ends, and the next query opens another', async () => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db);
    const admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    try {
      // The connection is idle in the pool now: the server ends it under the pool's feet.
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    const deadline = Date.now() + 5_000;
    while (broken.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(broken.length).toBe(1);
    const again = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
    expect(again.rows[0]!.one).toBe(1);
  });
});

describe('directQueryOf', () => {
  const made = `direct_rows_${Date.now()}`;
  beforeAll(async () => {
    await sql`create table ${sql.table(made)} (id text primary key, created_at timestamptz not null, some_json jsonb not null, a_number int)`.execute(handle.db);
    await sql`insert into ${sql.table(made)} values ('a', now(), '{"nested_key": {"deeper_key": [{"in_list": 1}]}}', 7), ('b', now(), '[]', null)`.execute(handle.db);
  });

  it("answers a compiled statement's rows as Kysely does (camelCase keys, nested JSON keys too, Dates), and tells onQuery", async () => {
    const seen: string[] = [];
    const other = await openDatabase({ url: fresh.url, poolSize: 1, onQuery: (s) => seen.push(s) });
    try {
      const anyDb = other.db as unknown as Kysely<any>;
      const compiled = anyDb.selectFrom(made).selectAll().where('id', 'in', ['a', 'b']).orderBy('id').compile();
      const direct = directQueryOf(other.db)!;
      const rows = await direct(compiled.sql, compiled.parameters);
      const viaKysely = await other.db.executeQuery(compiled);
      expect(rows).toEqual(viaKysely.rows);
      expect(rows[0]).toMatchObject({ id: 'a', createdAt: expect.any(Date), someJson: { nestedKey: { deeperKey: [{ inList: 1 }] } }, aNumber: 7 });
      expect(seen.filter((s) => s === compiled.sql)).toHaveLength(2);
    } finally {
      await other.close();
    }
  });

  it('prepares a named statement again when a migration changed the type of a column it answers', async () => {
    const changing = `${made}_changing`;
    await sql`create table ${sql.table(changing)} (id text primary key, amount int not null)`.execute(handle.db);
    await sql`insert into ${sql.table(changing)} values ('a', 7)`.execute(handle.db);
    const other = await openDatabase({ url: fresh.url, poolSize: 1 });
    try {
      const direct = directQueryOf(other.db)!;
      const text = `select id, amount from "${changing}" where id = $1`;
      expect(await direct(text, ['a'], 'skiff_changing')).toEqual([{ id: 'a', amount: 7 }]);
      // Another control plane's migration, while this one's connection holds the statement.
      await sql`alter table ${sql.table(changing)} alter column amount type text`.execute(handle.db);
      expect(await direct(text, ['a'], 'skiff_changing')).toEqual([{ id: 'a', amount: '7' }]);
      expect(await direct(text, ['a'], 'skiff_changing')).toEqual([{ id: 'a', amount: '7' }]);
    } finally {
      await other.close();
    }
  });

  it('is none for a transaction (its statements run on its connection) or another Kysely made from the handle', async () => {
    expect(directQueryOf(handle.db)).toBeTypeOf('function');
    await handle.db.transaction().execute(async (tx) => {
      expect(directQueryOf(tx)).toBeUndefined();
    });
    expect(directQueryOf(handle.db.withoutPlugins())).toBeUndefined();
  });
});
