import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, directQueryOf, openDatabase } from './database.js';
import { PgliteThread, PgliteThreadDialect } from './pglite-thread.js';

describe('PGlite in its worker thread', () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await openDatabase({});
    await sql`create table items (id int primary key, name text not null)`.execute(h.db);
  }, 120_000);
  afterAll(() => h?.close());

  it('leaves the event loop free while a query runs', async () => {
    const started = performance.now();
    const query = sql<{ n: number }>`select count(*)::int as n from generate_series(1, 5000000)`.execute(h.db);
    const timerAfter = await new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - started), 5));
    const { rows } = await query;
    const queryTook = performance.now() - started;
    expect(rows).toEqual([{ n: 5_000_000 }]);
    expect(queryTook).toBeGreaterThan(100);
    expect(timerAfter).toBeLessThan(queryTook / 2);
  });

  it('keeps a transaction on its connection: other queries wait for its end', async () => {
    const seen: string[] = [];
    await h.db.transaction().execute(async (tx) => {
      await sql`insert into items values (1, 'one')`.execute(tx);
      void sql<{ n: number }>`select count(*)::int as n from items`.execute(h.db).then((r) => seen.push(`outside: ${r.rows[0]!.n}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen.push('committing');
    });
    await sql`select 1`.execute(h.db);
    expect(seen).toEqual(['committing', 'outside: 1']);
  });

  it('sends the statements of concurrent callers without waiting for each answer (pipelined)', async () => {
    const thread = await PgliteThread.start('memory://', []);
    const db = new Kysely<unknown>({ dialect: new PgliteThreadDialect(thread) });
    try {
      const slow = sql`select pg_sleep(0.3)`.execute(db);
      const quick = Array.from({ length: 5 }, (_, i) => sql<{ n: number }>`select ${i}::int as n`.execute(db));
      const answers = await Promise.all(quick);
      await slow;
      expect(answers.map((a) => a.rows[0]!.n)).toEqual([0, 1, 2, 3, 4]);
      expect(thread.maxInFlight).toBe(6);
    } finally {
      await db.destroy();
    }
  }, 120_000);

  it('runs concurrent transactions one after the other, never interleaved', async () => {
    const seen: string[] = [];
    const run = (name: string, id: number) =>
      h.db.transaction().execute(async (tx) => {
        seen.push(`${name} begins`);
        await sql`insert into items values (${id}, ${name})`.execute(tx);
        await new Promise((resolve) => setTimeout(resolve, 30));
        seen.push(`${name} commits`);
      });
    await Promise.all([run('a', 10), run('b', 11)]);
    expect(seen).toEqual(['a begins', 'a commits', 'b begins', 'b commits']);
    await sql`delete from items where id in (10, 11)`.execute(h.db);
  });

  it('rolls a failed transaction back, and answers errors with their Postgres fields', async () => {
    const failed = await h.db
      .transaction()
      .execute(async (tx) => {
        await sql`insert into items values (2, 'two')`.execute(tx);
        await sql`insert into items values (1, 'again')`.execute(tx);
      })
      .catch((err: unknown) => err as { code?: string; constraint?: string; message: string });
    expect(failed).toMatchObject({ code: '23505', constraint: 'items_pkey' });
    const { rows } = await sql<{ id: number }>`select id from items order by id`.execute(h.db);
    expect(rows).toEqual([{ id: 1 }]);
  });

  it('carries dates, JSON, bytes and nulls both ways', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const { rows } = await sql<{ at: Date; doc: unknown; bytes: Uint8Array; nothing: null }>`
      select ${at}::timestamptz as at, ${JSON.stringify({ a: [1] })}::jsonb as doc, ${Buffer.from('hi')}::bytea as bytes, null as nothing`.execute(h.db);
    expect(rows[0]!.at).toEqual(at);
    expect(rows[0]!.doc).toEqual({ a: [1] });
    expect(Buffer.from(rows[0]!.bytes).toString()).toBe('hi');
    expect(rows[0]!.nothing).toBeNull();
  });

  it("runs a compiled statement past Kysely (directQueryOf): Kysely's rows, after the open transaction's end", async () => {
    const direct = directQueryOf(h.db)!;
    const compiled = sql<{ id: number; name: string }>`select id, name as item_name from items where id = ${1}`.compile(h.db);
    expect(await direct(compiled.sql, compiled.parameters)).toEqual((await h.db.executeQuery(compiled)).rows);
    expect(await direct(compiled.sql, compiled.parameters)).toEqual([{ id: 1, itemName: 'one' }]);
    const seen: string[] = [];
    await h.db.transaction().execute(async (tx) => {
      await sql`update items set name = 'changed' where id = 1`.execute(tx);
      void direct(compiled.sql, compiled.parameters).then((rows) => seen.push(`direct: ${rows[0]!.itemName}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sql`update items set name = 'one' where id = 1`.execute(tx);
      seen.push('committing');
    });
    await sql`select 1`.execute(h.db);
    expect(seen).toEqual(['committing', 'direct: one']);
    await h.db.transaction().execute(async (tx) => expect(directQueryOf(tx)).toBeUndefined());
  });

  it('stops its thread on close; a query after it fails', async () => {
    const other = await openDatabase({});
    await other.close();
    await expect(sql`select 1`.execute(other.db)).rejects.toThrow();
  }, 120_000);
});

describe('a dump of PGlite in its worker thread', () => {
  it('waits for the open transaction, keeps statements out while it runs, and restores into a fresh database', async () => {
    const h = await openDatabase({});
    try {
      await sql`create table notes (id int primary key, body text not null)`.execute(h.db);
      await sql`insert into notes values (1, ${"it's kept"})`.execute(h.db);
      let dumping: Promise<string> | undefined;
      await h.db.transaction().execute(async (tx) => {
        await sql`insert into notes values (2, 'committed before the dump')`.execute(tx);
        dumping = (async () => {
          let text = '';
          for await (const piece of h.dumpSql!()) text += new TextDecoder().decode(piece);
          return text;
        })();
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
      const after = sql`insert into notes values (3, 'after the dump')`.execute(h.db);
      const text = await dumping!;
      await after;
      expect(text).toContain("INSERT INTO public.notes (id, body) VALUES\n('1', 'it''s kept');");
      expect(text).toContain('committed before the dump');
      expect(text).not.toContain('after the dump');
      // pg_dump empties the session's search_path while it runs: unqualified names work again.
      expect((await sql<{ n: number }>`select count(*)::int as n from notes`.execute(h.db)).rows).toEqual([{ n: 3 }]);

      const fresh = await PGlite.create('memory://');
      try {
        await fresh.exec(text);
        const rows = await fresh.query<{ id: number }>('select id from public.notes order by id');
        expect(rows.rows.map((r) => r.id)).toEqual([1, 2]);
      } finally {
        await fresh.close();
      }
    } finally {
      await h.close();
    }
  }, 120_000);
});
