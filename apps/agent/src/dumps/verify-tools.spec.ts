// The verification tools of each engine, as golden files (MariaDB's and MySQL's run only
// here and in a manual check; PostgreSQL's also in handlers/verify-database.int.test.ts).
import { DatabaseEngine } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { countCommand, parseCounts, readyCommand, scratchEnv } from './verify-tools.js';

const ENGINES = { postgres: DatabaseEngine.DATABASE_ENGINE_POSTGRES, mariadb: DatabaseEngine.DATABASE_ENGINE_MARIADB, mysql: DatabaseEngine.DATABASE_ENGINE_MYSQL };
const HOSTILE = 'shop"; rm -rf / #$(id)`id`';

describe('the tools of a verification', () => {
  for (const [name, engine] of Object.entries(ENGINES)) {
    it(`${name}: fixed scripts, the database a positional parameter, the query another`, async () => {
      const tools = { env: scratchEnv(engine, 'shop', 'PASSWORD'), ready: readyCommand(engine, 'shop'), count: countCommand(engine, 'shop') };
      await expect(JSON.stringify(tools, null, 2) + '\n').toMatchFileSnapshot(`__golden__/verify-${name}.json`);
      for (const make of [readyCommand, countCommand]) {
        const argv = make(engine, HOSTILE)!.argv;
        expect(argv.slice(0, 4)).toEqual(make(engine, 'shop')!.argv.slice(0, 4));
        expect(argv[4]).toBe(HOSTILE);
      }
    });
  }

  it('has none for MongoDB', () => {
    expect(scratchEnv(DatabaseEngine.DATABASE_ENGINE_MONGO, 'x', 'p')).toBeNull();
    expect(countCommand(DatabaseEngine.DATABASE_ENGINE_MONGO, 'x')).toBeNull();
  });

  it('reads the counts as JSON, sorted by name, and says what it got otherwise', () => {
    expect(parseCounts('[{"name":"b","rows":2},{"name":"a","rows":10}]\n')).toEqual([{ name: 'a', rows: '10' }, { name: 'b', rows: '2' }]);
    expect(parseCounts('[]')).toEqual([]);
    expect(() => parseCounts('ERROR 1049')).toThrow('the table counts could not be read: "ERROR 1049"');
  });
});
