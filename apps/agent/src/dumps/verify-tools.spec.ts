// The verification tools of each engine, as golden files (MariaDB's and MySQL's run only
// here and in a manual check; PostgreSQL's also in handlers/verify-database.int.test.ts).
// MongoDB's server cannot run here (no image, not in Debian): its commands and the parsing
// of what its count script prints are checked only here. `tools` are the programs an image must
// have for its engine's verification (looked for before its server starts). The commands do not
// depend on whether the database is a service or a compose stack's service: only the image does.
import { DatabaseEngine } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { countCommand, parseCounts, readyCommand, scratchEnv, verifyTools } from './verify-tools.js';

const ENGINES = {
  postgres: DatabaseEngine.DATABASE_ENGINE_POSTGRES,
  mariadb: DatabaseEngine.DATABASE_ENGINE_MARIADB,
  mysql: DatabaseEngine.DATABASE_ENGINE_MYSQL,
  mongo: DatabaseEngine.DATABASE_ENGINE_MONGO,
};
const HOSTILE = 'shop"; rm -rf / #$(id)`id`';

describe('the tools of a verification', () => {
  for (const [name, engine] of Object.entries(ENGINES)) {
    it(`${name}: fixed scripts, the database a positional parameter, the query another`, async () => {
      const tools = { env: scratchEnv(engine, 'shop', 'PASSWORD'), tools: verifyTools(engine, 'shop'), ready: readyCommand(engine, 'shop'), count: countCommand(engine, 'shop') };
      await expect(JSON.stringify(tools, null, 2) + '\n').toMatchFileSnapshot(`__golden__/verify-${name}.json`);
      for (const make of [readyCommand, countCommand]) {
        const argv = make(engine, HOSTILE)!.argv;
        expect(argv.slice(0, 4)).toEqual(make(engine, 'shop')!.argv.slice(0, 4));
        expect(argv[4]).toBe(HOSTILE);
      }
    });
  }

  it('mongo: the database reaches mongosh only as a variable, never inside its script', () => {
    for (const make of [readyCommand, countCommand]) {
      const argv = make(DatabaseEngine.DATABASE_ENGINE_MONGO, HOSTILE)!.argv;
      expect(argv[2]).toMatch(/^SKIFF_DATABASE="\$1" exec mongosh .* --eval "\$2"$/);
      expect(argv[5]).not.toContain(HOSTILE);
      expect(argv).toHaveLength(6);
    }
    expect(countCommand(DatabaseEngine.DATABASE_ENGINE_MONGO, 'x')!.argv[5]).toContain('process.env.SKIFF_DATABASE');
  });

  it('has none for an engine it does not know', () => {
    expect(scratchEnv(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x', 'p')).toBeNull();
    expect(readyCommand(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x')).toBeNull();
    expect(countCommand(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x')).toBeNull();
    expect(verifyTools(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x')).toBeNull();
  });

  it('reads the counts as JSON, sorted by name, and says what it got otherwise', () => {
    expect(parseCounts('[{"name":"b","rows":2},{"name":"a","rows":10}]\n')).toEqual([{ name: 'a', rows: '10' }, { name: 'b', rows: '2' }]);
    expect(parseCounts('[]')).toEqual([]);
    expect(() => parseCounts('ERROR 1049')).toThrow('the table counts could not be read: "ERROR 1049"');
  });

  it('reads what the MongoDB count script prints: numbers, an empty database, an error', () => {
    // JSON.stringify in mongosh: countDocuments answers numbers; print ends with a newline.
    expect(parseCounts('[{"name":"orders","rows":3},{"name":"events","rows":0}]\n')).toEqual([
      { name: 'events', rows: '0' },
      { name: 'orders', rows: '3' },
    ]);
    expect(parseCounts('[]\n')).toEqual([]);
    expect(() => parseCounts('MongoServerError: Authentication failed.')).toThrow('the table counts could not be read: "MongoServerError: Authentication failed."');
  });
});
