// The dump and restore tools of each engine, as golden files: MySQL and MongoDB have no image
// that runs here, so their command lines are checked only here; PostgreSQL and MariaDB also
// run end to end (apps/control-plane/src/backups.e2e.test.ts).
import { DatabaseEngine } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { dumpCommand, restoreCommand } from './tool-commands.js';

const ENGINES = {
  postgres: DatabaseEngine.DATABASE_ENGINE_POSTGRES,
  mariadb: DatabaseEngine.DATABASE_ENGINE_MARIADB,
  mysql: DatabaseEngine.DATABASE_ENGINE_MYSQL,
  mongo: DatabaseEngine.DATABASE_ENGINE_MONGO,
};
const HOSTILE = 'shop"; rm -rf / #$(id)`id`';

describe('the engine tools of dumps and restores', () => {
  for (const [name, engine] of Object.entries(ENGINES)) {
    it(`${name}: fixed scripts, the database as their one positional parameter`, async () => {
      const dump = dumpCommand(engine, 'shop')!;
      const restore = restoreCommand(engine, 'shop')!;
      await expect(JSON.stringify({ dump, restore }, null, 2) + '\n').toMatchFileSnapshot(`__golden__/${name}.json`);
      // A hostile name is only ever "$1": the script is the same whatever the name.
      for (const make of [dumpCommand, restoreCommand]) {
        const argv = make(engine, HOSTILE)!.argv;
        expect(argv.slice(0, 4)).toEqual(make(engine, 'shop')!.argv.slice(0, 4));
        expect(argv[4]).toBe(HOSTILE);
        expect(argv).toHaveLength(5);
      }
    });
  }

  it('has no tool for an engine it does not know', () => {
    expect(dumpCommand(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x')).toBeNull();
    expect(restoreCommand(DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED, 'x')).toBeNull();
  });
});
