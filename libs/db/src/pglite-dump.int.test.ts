import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { freshDatabase } from '@skiff/testing';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from './database.js';
import { type DumpQuery, dataSection } from './pglite-dump.js';
import { restorePgliteDir } from './pglite-restore.js';

const TABLES = ['"Odd Schema"."Mixed ""Case"""', 'public.kinds', 'public.no_key', 'public."semi;colon $x$"'];
/** Values that look like the ends of strings, comments, dollar bodies and statements, or like what only psql reads. */
const AWKWARD = [
  `$$ ; $_$ ; $x$ '; "`,
  "E'\\''; -- not a comment;",
  '/* not; /* a */ comment',
  'line\n\\.\nCOPY public.kinds (t) FROM stdin;\n\\restrict x\n;',
  'ends with a backslash \\',
];
const BIG = `${'big text '.repeat(400_000)}end`;

async function readAll(pieces: AsyncIterable<Uint8Array>): Promise<{ text: string; sizes: number[] }> {
  const decoder = new TextDecoder();
  let text = '';
  const sizes: number[] = [];
  for await (const piece of pieces) {
    sizes.push(piece.byteLength);
    text += decoder.decode(piece, { stream: true });
  }
  return { text: text + decoder.decode(), sizes };
}

/** Every row of the test's tables in their text form, sorted, and each sequence's state: what a restore must give back. */
async function contents(query: (q: string) => Promise<{ rows: unknown[] }>): Promise<Record<string, string[]>> {
  await query("set timezone to 'UTC'");
  const out: Record<string, string[]> = {};
  for (const table of TABLES) out[table] = ((await query(`select whole_row::text as row from ${table} whole_row order by 1`)).rows as { row: string }[]).map((r) => r.row);
  out.sequences = ((await query('select sequencename || \' \' || coalesce(last_value, 0) as s from pg_sequences order by 1')).rows as { s: string }[]).map((r) => r.s);
  return out;
}

async function fillTrickyTables(h: DatabaseHandle) {
  await sql`create schema "Odd Schema"`.execute(h.db);
  await sql`create type public.mood as enum ('calm', 'it''s odd')`.execute(h.db);
  await sql`create table "Odd Schema"."Mixed ""Case""" (id int generated always as identity primary key, "the ""name""" text, doubled int generated always as (id * 2) stored)`.execute(h.db);
  await sql`create table public.kinds (
      id bigserial primary key, parent bigint references public.kinds (id), t text, b bytea, j jsonb, js json, arr text[], nums int[],
      n numeric, f float8, r real, ts timestamptz, tsn timestamp, d date, iv interval, u uuid, flag boolean, mood public.mood, rng int4range, pt point)`.execute(h.db);
  await sql`create table public.no_key (v text)`.execute(h.db);

  const texts = [null, '', 'back\\slash \\\\ two', 'tab\there\nnewline\r\nand \\N', `quote ' and " and ''`, 'ünï ☃ 𝄞 🚀 中文', "E'\\x00'", 'NULL', BIG];
  for (const t of texts) {
    await sql`insert into public.kinds (t, b, j, js, arr, nums, n, f, r, ts, tsn, d, iv, u, flag, mood, rng, pt) values (
      ${t},
      ${t === null ? null : Buffer.from(Array.from({ length: 256 }, (_, i) => i))},
      ${'{"s": "line\\nbreak \\\\ \\"q\\" \\t", "u": "☃\\u00e9", "n": 1.5e300, "a": [null, true, {}], "e": ""}'}::jsonb,
      ${'{"a": 1,  "a": 2}'}::json,
      ${'{a,NULL,"with,comma","with\\"quote","with\\\\backslash","{brace}","NULL",""}'}::text[],
      ${'{{1,2},{3,NULL}}'}::int[],
      ${'123456789012345678901234567890.123456789'}::numeric,
      ${'0.30000000000000004'}::float8, ${'3.4028235e38'}::real,
      ${'2026-01-02 03:04:05.123456+05:30'}::timestamptz, ${'infinity'}::timestamp, ${'0044-03-15 BC'}::date,
      ${'1 year 2 mons -3 days 04:05:06.789'}::interval, ${'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'}::uuid, ${true}, ${"it's odd"}::public.mood,
      ${'[1,10)'}::int4range, ${'(1.5,-2)'}::point)`.execute(h.db);
  }
  await sql`insert into public.kinds (f, n, b) values ('NaN', 'NaN', ''::bytea), ('-Infinity', '-0.000', null), ('-0', '1e-30', '\\x00'::bytea)`.execute(h.db);
  // A row pointing at one inserted after it: the foreign key must not be checked before both are in.
  await sql`update public.kinds set parent = (select max(id) from public.kinds) where id = 1`.execute(h.db);
  await sql`delete from public.kinds where id = 2`.execute(h.db);
  await sql`insert into "Odd Schema"."Mixed ""Case""" ("the ""name""") values ('one'), (null), ('three')`.execute(h.db);
  await sql`insert into public.no_key values ('dup'), ('dup'), (null)`.execute(h.db);
  await sql`alter table public.kinds drop column pt`.execute(h.db);
  await sql`insert into public.no_key values ('after a column was dropped elsewhere')`.execute(h.db);

  await sql`create table public."semi;colon $x$" ("a$b" text, e text default E'tab\\there; ''q''')`.execute(h.db);
  for (const v of AWKWARD) await sql`insert into public."semi;colon $x$" ("a$b") values (${v})`.execute(h.db);
  await sql`comment on table public."semi;colon $x$" is 'a comment; with -- dashes /* and a star */ and $$ dollars'`.execute(h.db);
  await sql
    .raw(`create function public."odd;fn"(x text) returns text language plpgsql as $body$
begin
  -- a comment inside; with a quote ' in it
  return x || 'a;b'' $$ /* not a comment */' || $q$;$q$;
end;
$body$`)
    .execute(h.db);
}

/** What the schema holds besides rows: the function's body and the table's comment. */
async function schemaContents(query: (q: string) => Promise<{ rows: unknown[] }>): Promise<unknown[]> {
  return (await query(`select public."odd;fn"('x') as f, obj_description('public."semi;colon $x$"'::regclass) as c`)).rows;
}

/** The text's bytes in pieces of `size`: cut through statements, strings and characters of several bytes. */
async function* inPieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('the embedded database’s dump, in pieces', () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await openDatabase({});
    await fillTrickyTables(h);
  }, 120_000);
  afterAll(() => h?.close());

  it('restores every row, value for value, into a new embedded database and with psql into PostgreSQL', async () => {
    const expected = await contents((q) => sql.raw(q).execute(h.db));
    expect(expected['public.kinds']).toHaveLength(11);
    expect(expected['public.kinds']!.some((r) => r.includes(BIG))).toBe(true);
    const { text } = await readAll(h.dumpSql!());

    const dir = await mkdtemp(join(tmpdir(), 'skiff-pglite-dump-'));
    const pgDb = await freshDatabase(inject('postgresUrl'));
    try {
      // The embedded restore (tools/platform-restore.ts), streamed: the bytes in pieces of 997, run in batches of 64 KiB.
      await restorePgliteDir(join(dir, 'db'), inPieces(text, 997), { batchChars: 64 << 10 });
      const restored = await PGlite.create(join(dir, 'db'));
      try {
        expect(await contents((q) => restored.query(q))).toEqual(expected);
        expect(expected['public."semi;colon $x$"']).toHaveLength(AWKWARD.length);
        expect(await schemaContents((q) => restored.query(q))).toEqual(await schemaContents((q) => sql.raw(q).execute(h.db)));
        // Sequences go on from where they were, identity columns too, and the foreign key holds.
        const next = await restored.query<{ id: string }>('insert into public.kinds (t) values ($1) returning id', ['new']);
        expect(Number(next.rows[0]!.id)).toBe(13);
        await expect(restored.query('insert into public.kinds (parent) values (999)')).rejects.toThrow(/foreign key/);
      } finally {
        await restored.close();
      }

      // psql into PostgreSQL, as the README says (before 17 only `SET transaction_timeout` is refused).
      await writeFile(join(dir, 'dump.sql'), text);
      const { stderr } = await promisify(execFile)('psql', ['--quiet', `--file=${join(dir, 'dump.sql')}`, pgDb.url], { maxBuffer: 64 << 20 });
      expect(stderr.split('\n').filter((l) => l.includes('ERROR') && !l.includes('"transaction_timeout"'))).toEqual([]);
      const client = new pg.Client({ connectionString: pgDb.url });
      await client.connect();
      try {
        expect(await contents((q) => client.query(q))).toEqual(expected);
        expect(await schemaContents((q) => client.query(q))).toEqual(await schemaContents((q) => sql.raw(q).execute(h.db)));
      } finally {
        await client.end();
      }
    } finally {
      await pgDb.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('comes in pieces, none much larger than a big row, and a reader that stops leaves the session writable', async () => {
    await sql`create table public.many (id int primary key, body text)`.execute(h.db);
    await sql`insert into public.many select i, repeat('row ', 50) || i from generate_series(1, 20000) i`.execute(h.db);
    try {
      const { sizes } = await readAll(h.dumpSql!());
      // 20,000 rows of ~210 bytes: at most 1,000 a piece.
      expect(sizes.length).toBeGreaterThan(20);
      expect(Math.max(...sizes)).toBeLessThan(2 * BIG.length);

      const pieces = h.dumpSql!()[Symbol.asyncIterator]();
      await pieces.next();
      await pieces.next();
      await pieces.return!(undefined);
      await sql`insert into public.many values (0, 'written after a dump that stopped')`.execute(h.db);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from public.many`.execute(h.db);
      expect(rows[0]!.n).toBe(20001);
    } finally {
      await sql`drop table public.many`.execute(h.db);
    }
  }, 120_000);
});

describe('the data section', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create('memory://');
    await db.exec(`create table small (id int primary key, v text);
      insert into small select i, 'v' || i from generate_series(1, 5000) i;
      create table large (id int primary key, v text);
      insert into large select i, repeat(md5(i::text), 6000) from generate_series(1, 40) i;`);
  }, 120_000);
  afterAll(() => db?.close());

  it('asks each FETCH for a bounded number of rows, fewer when rows are large', async () => {
    const fetched: Record<string, number[]> = { small: [], large: [] };
    let table = '';
    const query: DumpQuery = async (text, params) => {
      const result = await db.query(text, params as unknown[]);
      const declared = /declare skiff_dump .* from only public\.(\w+)$/.exec(text);
      if (declared) table = declared[1]!;
      if (text.startsWith('fetch ')) fetched[table]!.push(result.rows.length);
      return result;
    };
    const pieces: string[] = [];
    for await (const piece of dataSection(query, { maxRows: 1000, pieceChars: 1 << 20 })) pieces.push(piece);

    expect(fetched.small!.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(Math.max(...fetched.small!)).toBe(1000);
    // Rows of ~192 KB: five fit in a piece of 1 MiB.
    expect(fetched.large!.reduce((a, b) => a + b, 0)).toBe(40);
    expect(Math.max(...fetched.large!)).toBe(5);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(1.1 * (1 << 20));
    expect(db.isInTransaction()).toBe(false);
  });
});
