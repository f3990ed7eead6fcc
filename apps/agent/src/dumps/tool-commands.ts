/**
 * The engine tools a dump or a restore runs inside the database's container (docker exec),
 * as argument lists. Each is a fixed `sh -c` script: the credentials come from the
 * container's own variables (the official images' names) and the database's name is a
 * positional parameter (`"$1"`), so nothing from a command is ever parsed by a shell.
 */
import { DatabaseEngine } from '@skiff/proto';

export interface ToolCommand {
  argv: string[];
  /** What the archive is, in messages. */
  tool: string;
}

const script = (body: string, database: string): string[] => ['sh', '-c', body, 'sh', database];

/** The root password of the MariaDB and MySQL images, whichever of their variables is set. */
const MYSQL_PWD = 'MYSQL_PWD="${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}"';
const MONGO_AUTH = '--username "$MONGO_INITDB_ROOT_USERNAME" --password "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin';

/** The dump tool writing one database to standard output; null for an engine without one here. */
export function dumpCommand(engine: DatabaseEngine, database: string): ToolCommand | null {
  switch (engine) {
    case DatabaseEngine.DATABASE_ENGINE_POSTGRES:
      // Custom format (compressed by gzip after): pg_restore picks what to restore from it.
      return { tool: 'pg_dump', argv: script('exec pg_dump --format=custom --no-owner --no-privileges -U "${POSTGRES_USER:-postgres}" -d "$1"', database) };
    case DatabaseEngine.DATABASE_ENGINE_MARIADB:
      return {
        tool: 'mariadb-dump',
        argv: script(`${MYSQL_PWD} exec mariadb-dump -uroot --single-transaction --routines --triggers --events --hex-blob "$1"`, database),
      };
    case DatabaseEngine.DATABASE_ENGINE_MYSQL:
      return {
        tool: 'mysqldump',
        argv: script(`${MYSQL_PWD} exec mysqldump -uroot --single-transaction --routines --triggers --events --hex-blob "$1"`, database),
      };
    case DatabaseEngine.DATABASE_ENGINE_MONGO:
      return { tool: 'mongodump', argv: script(`exec mongodump --quiet ${MONGO_AUTH} --db "$1" --archive`, database) };
    default:
      return null;
  }
}

/** The restore tool reading a dump of `dumpCommand` from standard input into `database`. */
export function restoreCommand(engine: DatabaseEngine, database: string): ToolCommand | null {
  switch (engine) {
    case DatabaseEngine.DATABASE_ENGINE_POSTGRES:
      // --clean --if-exists: the dump's objects replace the database's, in one transaction.
      return {
        tool: 'pg_restore',
        argv: script('exec pg_restore --clean --if-exists --no-owner --no-privileges --single-transaction --exit-on-error -U "${POSTGRES_USER:-postgres}" -d "$1"', database),
      };
    case DatabaseEngine.DATABASE_ENGINE_MARIADB:
      return { tool: 'mariadb', argv: script(`${MYSQL_PWD} exec mariadb -uroot --binary-mode "$1"`, database) };
    case DatabaseEngine.DATABASE_ENGINE_MYSQL:
      return { tool: 'mysql', argv: script(`${MYSQL_PWD} exec mysql -uroot --binary-mode "$1"`, database) };
    case DatabaseEngine.DATABASE_ENGINE_MONGO:
      return { tool: 'mongorestore', argv: script(`exec mongorestore --quiet ${MONGO_AUTH} --drop --nsInclude="$1.*" --archive`, database) };
    default:
      return null;
  }
}

/** Where a volume tool's throw-away container mounts the volume. */
export const VOLUME_PATH = '/volume';

/** The volume's content as a tar stream on standard output (its owners and modes kept). */
export const VOLUME_ARCHIVE: ToolCommand = { tool: 'tar', argv: ['tar', '-c', '-f', '-', '-C', '/volume', '.'] };

/** Empties the volume, then extracts the tar stream of standard input into it. */
export const VOLUME_EXTRACT: ToolCommand = {
  tool: 'tar',
  argv: ['sh', '-c', 'find /volume -mindepth 1 -maxdepth 1 -exec rm -rf {} + && exec tar -x -p -f - -C /volume'],
};
