import { type DatabaseHandle, openDatabase } from '@skiff/db';
import { freshDatabase } from '@skiff/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { compiledOnce } from './compiled-once.js';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let handle: DatabaseHandle;
const statements: string[] = [];
const byName = compiledOnce(['name'], (db, slot) => db.selectFrom('things').select(['id', 'shownName']).where('shownName', '=', slot.name));

beforeAll(async () => {
  fresh = await freshDatabase(inject('postgresUrl'));
  handle = await openDatabase({ url: fresh.url, poolSize: 2, onQuery: (s) => statements.push(s) });
  await sql`create table things (id int primary key, shown_name text not null)`.execute(handle.db);
  await sql`insert into things values (1, 'one'), (2, 'two')`.execute(handle.db);
});
afterAll(async () => {
  await handle?.close();
  await fresh?.drop();
});

it('answers camelCase rows for the values given, the statement told to onQuery each run', async () => {
  statements.length = 0;
  expect(await byName(handle.db, { name: 'two' })).toEqual([{ id: 2, shownName: 'two' }]);
  expect(await byName(handle.db, { name: 'one' })).toEqual([{ id: 1, shownName: 'one' }]);
  expect(statements).toEqual([expect.stringContaining('"shown_name" = $1'), expect.stringContaining('"shown_name" = $1')]);
});

it("runs in a transaction on the transaction's connection: it sees the transaction's own rows", async () => {
  await handle.db
    .transaction()
    .execute(async (tx) => {
      await sql`insert into things values (3, 'three')`.execute(tx);
      expect(await byName(tx, { name: 'three' })).toEqual([{ id: 3, shownName: 'three' }]);
      throw new Error('roll back');
    })
    .catch((err: Error) => expect(err.message).toBe('roll back'));
  expect(await byName(handle.db, { name: 'three' })).toEqual([]);
});

it('runs on PostgreSQL as a prepared statement, parsed once a connection, that a column added later does not break', async () => {
  const single = await openDatabase({ url: fresh.url, poolSize: 1 });
  try {
    expect(await byName(single.db, { name: 'one' })).toEqual([{ id: 1, shownName: 'one' }]);
    expect(await byName(single.db, { name: 'two' })).toEqual([{ id: 2, shownName: 'two' }]);
    // The pool's one connection: the session that prepared it.
    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(single.db);
    expect(rows).toEqual([{ name: expect.stringMatching(/^skiff_[0-9a-f]{32}$/), statement: expect.stringContaining('"shown_name" = $1') }]);
    await sql`alter table things add column added_later text`.execute(single.db);
    expect(await byName(single.db, { name: 'two' })).toEqual([{ id: 2, shownName: 'two' }]);
  } finally {
    await sql`alter table things drop column if exists added_later`.execute(handle.db);
    await single.close();
  }
});

it('refuses a statement whose answer is `*` (its columns would change with the table under a prepared statement)', async () => {
  const everything = compiledOnce(['name'], (db, slot) => db.selectFrom('things').selectAll().where('shownName', '=', slot.name));
  const qualified = compiledOnce(['name'], (db, slot) => db.selectFrom('things as t').selectAll('t').where('t.shownName', '=', slot.name));
  const returned = compiledOnce(['name'], (db, slot) => db.updateTable('things').set({ shownName: slot.name }).where('id', '=', 0).returningAll());
  for (const statement of [everything, qualified, returned]) {
    await expect(statement(handle.db, { name: 'one' })).rejects.toThrow(/name the columns of the answer, not \*/);
  }
  const counted = compiledOnce(['name'], (db, slot) => db.selectFrom('things').select((eb) => eb.fn.countAll().as('n')).where('shownName', '=', slot.name));
  expect(await counted(handle.db, { name: 'one' })).toEqual([{ n: '1' }]);
});
