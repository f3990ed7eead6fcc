import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteThread, PgliteThreadDialect } from './pglite-thread.js';

const TABLE = `create table typed (
  id int primary key, big bigint, num numeric, real_ double precision, flag boolean, at timestamptz, day date,
  doc jsonb, plain json, bytes bytea, tags text[], ids int[], uid uuid, body text)`;
const INSERT = 'insert into typed (id, big, num, real_, flag, at, day, doc, plain, bytes, tags, ids, uid, body) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)';
const VALUES: unknown[][] = [
  [1, 9007199254740993n, '12.50', 0.1, true, new Date('2026-01-02T03:04:05.678Z'), '2026-03-04', { a: [1, { b: null }] }, [1, 'x'], Buffer.from('hi\u0000there'), ['a', 'b c', 'd"e'], [1, 2, 3], '8c2b6f3e-5a0d-4e7b-9d0a-1f2e3d4c5b6a', "it's"],
  [2, null, null, null, false, null, null, null, null, null, [], null, null, null],
  [3, -1, '-0.001', -2.5e300, null, '2026-05-06 07:08:09+02', new Date('2026-07-08T00:00:00Z'), '"a JSON text"', { deep: { er: 'ok' } }, new Uint8Array([0, 255]), null, [null, 4], null, ''],
];
const SELECT = 'select * from typed where id = $1';

/** A Kysely over a database thread keeping `kept` prepared statements. */
async function threadDb(kept?: number) {
  const thread = await PgliteThread.start('memory://', [], kept);
  return new Kysely<unknown>({ dialect: new PgliteThreadDialect(thread) });
}
const run = (db: Kysely<unknown>, text: string, params: unknown[] = []) => db.executeQuery<Record<string, unknown>>({ sql: text, parameters: params, query: { kind: 'RawNode' } } as never);
const preparedTexts = async (db: Kysely<unknown>) =>
  (await run(db, 'select statement from pg_prepared_statements order by prepare_time, name')).rows.map((r) => r.statement);

describe('statements with parameters on the database thread (prepared once, by text)', () => {
  let db: Kysely<unknown>;
  beforeAll(async () => {
    db = await threadDb();
    await run(db, TABLE);
  }, 120_000);
  afterAll(() => db?.destroy());

  it('answers every type as PGlite’s own query does, and prepares each text once', async () => {
    const plain = await PGlite.create('memory://');
    try {
      await plain.exec(TABLE);
      for (const values of VALUES) {
        const ours = await run(db, INSERT, values);
        const theirs = await plain.query(INSERT, values);
        expect(ours.numAffectedRows).toBe(BigInt(theirs.affectedRows!));
      }
      for (const [id] of VALUES) {
        const ours = await run(db, SELECT, [id]);
        const theirs = await plain.query(SELECT, [id]);
        expect(ours.rows).toEqual(theirs.rows);
        expect(ours.rows).toHaveLength(1);
      }
      const mixed = 'select $1::int + 1 as n, $2::text as t, $3::timestamptz as at, $4::jsonb as j';
      const params = [41, 'x', new Date('2026-01-01T00:00:00Z'), { k: 'v' }];
      expect((await run(db, mixed, params)).rows).toEqual((await plain.query(mixed, params)).rows);
      const updated = await run(db, 'update typed set body = $1 where id > $2', ['changed', 1]);
      expect(updated.numAffectedRows).toBe(2n);
      expect(await preparedTexts(db)).toEqual([INSERT, SELECT, mixed, 'update typed set body = $1 where id > $2']);
    } finally {
      await plain.close();
    }
  }, 120_000);

  it('answers a statement without parameters (unnamed, parsed each time) as PGlite’s own query does', async () => {
    const plain = await PGlite.create('memory://');
    try {
      await plain.exec(TABLE);
      for (const values of VALUES) await plain.query(INSERT, values);
      await plain.query("update typed set body = 'changed' where id > 1");
      const all = 'select * from typed where id in (1, 2, 3) order by id';
      expect((await run(db, all)).rows).toEqual((await plain.query(all)).rows);
      const literals = "select 1::int8 as big, now() - now() as gap, '{\"a\": 1}'::jsonb as j, '\\x0102'::bytea as b, array[1, null]::int[] as a, null::text as n";
      expect((await run(db, literals)).rows).toEqual((await plain.query(literals)).rows);
      expect((await run(db, 'update typed set body = body where id < 100')).numAffectedRows).toBe(3n);
      await expect(run(db, 'select * from nowhere')).rejects.toMatchObject({ code: '42P01', query: 'select * from nowhere' });
      await expect(run(db, 'select 1; select 2')).rejects.toMatchObject({ code: '42601' });
      expect((await run(db, 'select 1 as one')).rows).toEqual([{ one: 1 }]);
      expect(await preparedTexts(db)).not.toContain(all);
    } finally {
      await plain.close();
    }
  }, 120_000);

  it('keeps the statements prepared inside a transaction that rolls back, and the rollback undoes their work', async () => {
    const insert = 'insert into typed (id, body) values ($1, $2)';
    await db
      .transaction()
      .execute(async (tx) => {
        await run(tx as never, insert, [100, 'inside']);
        expect((await run(tx as never, 'select body from typed where id = $1 and $2::int = 1', [100, 1])).rows).toEqual([{ body: 'inside' }]);
        throw new Error('roll it back');
      })
      .catch(() => {});
    expect((await run(db, 'select body from typed where id = $1 and $2::int = 1', [100, 1])).rows).toEqual([]);
    await run(db, insert, [101, 'after']);
    expect((await run(db, 'select body from typed where id = $1 and $2::int = 1', [101, 1])).rows).toEqual([{ body: 'after' }]);
    expect(await preparedTexts(db)).toContain(insert);
  });

  it('answers a failing statement with its Postgres fields, and the next statement runs', async () => {
    const insert = 'insert into typed (id, body) values ($1, $2)';
    await run(db, insert, [200, 'first']);
    await expect(run(db, insert, [200, 'again'])).rejects.toMatchObject({ code: '23505', constraint: 'typed_pkey', query: insert });
    await expect(run(db, 'select * from typed where idd = $1', [1])).rejects.toMatchObject({ code: '42703' });
    await expect(run(db, 'select * from typed where id = $1', ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    await run(db, insert, [201, 'second']);
    expect((await run(db, 'select id from typed where id >= $1 and id < $2 order by id', [200, 300])).rows).toEqual([{ id: 200 }, { id: 201 }]);
    // In a transaction the failure aborts it; after its rollback the session works again.
    const failed = await db
      .transaction()
      .execute(async (tx) => {
        await run(tx as never, insert, [202, 'in']);
        await run(tx as never, insert, [200, 'duplicate']);
      })
      .catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: '23505' });
    expect((await run(db, 'select id from typed where id >= $1 and id < $2 order by id', [200, 300])).rows).toEqual([{ id: 200 }, { id: 201 }]);
  });

  it('prepares a statement again when its table changes under it or it is deallocated', async () => {
    await run(db, 'create table changing (id int primary key)');
    await run(db, 'insert into changing values (1)');
    const read = 'select * from changing where id = $1';
    expect((await run(db, read, [1])).rows).toEqual([{ id: 1 }]);
    await run(db, "alter table changing add column label text not null default 'new'");
    expect((await run(db, read, [1])).rows).toEqual([{ id: 1, label: 'new' }]);
    await run(db, 'deallocate all');
    expect((await run(db, read, [1])).rows).toEqual([{ id: 1, label: 'new' }]);
  });
});

describe('the prepared statements kept', () => {
  it('keeps the most recently used, closing the least recently used; an evicted one is prepared again', async () => {
    const db = await threadDb(2);
    try {
      const a = 'select $1::int as a';
      const b = 'select $1::int as b';
      const c = 'select $1::int as c';
      await run(db, a, [1]);
      await run(db, b, [2]);
      await run(db, a, [3]);
      expect((await run(db, c, [4])).rows).toEqual([{ c: 4 }]);
      expect(await preparedTexts(db)).toEqual([a, c]);
      expect((await run(db, b, [5])).rows).toEqual([{ b: 5 }]);
      expect(await preparedTexts(db)).toEqual([c, b]);
    } finally {
      await db.destroy();
    }
  }, 120_000);
});
