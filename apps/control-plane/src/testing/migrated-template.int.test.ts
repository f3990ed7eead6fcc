import { migrateToLatest, openDatabase } from '@skiff/db';
import { freshDatabase } from '@skiff/testing';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';

async function migrationsOf(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = await c.query("select 1 from information_schema.tables where table_name = 'skiff_migrations'");
    if (tables.rowCount === 0) return [];
    return (await c.query<{ name: string }>('select name from skiff_migrations order by name')).rows.map((r) => r.name);
  } finally {
    await c.end();
  }
}

describe("the run's migrated template", () => {
  it('gives each platform a database already migrated to the latest', async () => {
    const copy = await freshDatabase(inject('postgresUrl'), inject('postgresTemplate'));
    const empty = await freshDatabase(inject('postgresUrl'));
    try {
      expect(await migrationsOf(empty.url)).toEqual([]);
      const handle = await openDatabase({ url: empty.url, poolSize: 1 });
      await migrateToLatest(handle.db).finally(() => handle.close());
      const latest = await migrationsOf(empty.url);
      expect(latest.length).toBeGreaterThan(30);
      expect(await migrationsOf(copy.url)).toEqual(latest);
    } finally {
      await Promise.all([copy.drop(), empty.drop()]);
    }
  });

  it('refuses a template that is not a database name', async () => {
    await expect(freshDatabase(inject('postgresUrl'), 'x; drop database postgres')).rejects.toThrow('not a database name');
  });
});
