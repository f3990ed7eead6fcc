import { freshDatabase } from '@skiff/testing';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from './database.js';

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
