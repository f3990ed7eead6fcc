import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restorePgliteDir } from './pglite-restore.js';

/**
 * A platform backup's dump as the embedded database wrote it before the restore streamed
 * (commit ba6465a): pg_dump's schema, the rows of pglite-dump.ts, a function, a view and a
 * comment whose quotes and `;` a splitter must get right.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'platform-dump-v1.sql.gz');
const TABLE = '"semi;colon $x$"."t;""q"';
const good = `CREATE TABLE t (id int primary key, v text);\n${Array.from({ length: 50 }, (_, i) => `INSERT INTO t VALUES (${i}, '${'x'.repeat(100)}');`).join('\n')}`;

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'skiff-pglite-restore-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

async function opened<T>(dir: string, read: (db: PGlite) => Promise<T>): Promise<T> {
  const db = await PGlite.create(dir);
  try {
    return await read(db);
  } finally {
    await db.close();
  }
}

describe('the restore of an embedded platform backup, streamed', () => {
  it('loads a dump written before it streamed, gunzipped as it is read', async () => {
    const dir = join(work, 'db');
    await restorePgliteDir(dir, createReadStream(FIXTURE).pipe(createGunzip()), { batchChars: 256 });
    const { rows, fn, view, comment, next } = await opened(dir, async (db) => ({
      rows: (await db.query<{ id: number; a: string | null; e: string }>(`select id, "a$b" as a, e from ${TABLE} order by id`)).rows,
      fn: (await db.query<{ f: string }>(`select public."odd;fn"('x') as f`)).rows[0]!.f,
      view: (await db.query('select * from public.v')).rows,
      comment: (await db.query<{ c: string }>(`select obj_description('${TABLE.replaceAll("'", "''")}'::regclass) as c`)).rows[0]!.c,
      next: (await db.query<{ id: number }>(`insert into ${TABLE} default values returning id`)).rows[0]!.id,
    }));
    expect(rows.map((r) => r.a)).toEqual(['plain', 'semi;colon', "dollar $$ ; quote ' ", "back\\slash ' ; E'x'", 'line\nbreak; -- not a comment\n/* nor this */', 'ünï ☃ 𝄞', null]);
    expect(new Set(rows.map((r) => r.e))).toEqual(new Set(["tab\there; 'q'"]));
    expect(fn).toBe("xa;b' $$ /* not a comment */;");
    expect(view).toEqual([{ s: 'view; text -- not a comment', b: '\\back;slash' }]);
    expect(comment).toBe('a comment; with -- dashes /* and a star */ and $$ dollars');
    expect(next).toBe(8);
  }, 120_000);

  // Each attempt makes a new cluster (several seconds on a busy machine).
  it('is all or nothing: a statement that fails, or a dump cut short, leaves no database behind', async () => {
    const dir = join(work, 'db');
    // The failure comes many batches in; the message names the statement, never its values.
    await expect(restorePgliteDir(dir, `${good}\nINSERT INTO t VALUES (7, 'a secret value');\n`, { batchChars: 512 })).rejects.toThrow(
      /^statement 52 of the dump \(INSERT INTO t VALUES \(7, …\) failed: duplicate key value violates unique constraint "t_pkey"$/,
    );
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    await expect(restorePgliteDir(dir, `CREATE TABLE u (v text);\nINSERT INTO nothing VALUES ('a secret value');`)).rejects.toThrow(
      /^statement 2 of the dump \(INSERT INTO nothing VALUES \(…\) failed: relation "nothing" does not exist$/,
    );
    await expect(restorePgliteDir(dir, `${good}\nINSERT INTO t VALUES (99, 'cut short`)).rejects.toThrow(/ends inside a quoted string/);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  }, 120_000);

  it('leaves a folder that was there as it found it, and the next attempt loads', async () => {
    const dir = join(work, 'db');
    await mkdir(dir);
    await writeFile(join(dir, 'kept'), '');
    await expect(restorePgliteDir(dir, [new Uint8Array([0x1f, 0x8b, 0x08, 0xff])])).rejects.toThrow(/not UTF-8 text/);
    expect(await readdir(dir)).toEqual(['kept']);
    await rm(join(dir, 'kept'));

    await restorePgliteDir(dir, good, { batchChars: 512 });
    expect(await opened(dir, async (db) => (await db.query<{ n: number }>('select count(*)::int as n from t')).rows[0]!.n)).toBe(50);
    await expect(restorePgliteDir(dir, good)).rejects.toThrow(/holds a database already/);
  }, 120_000);
});
