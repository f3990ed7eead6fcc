/**
 * The engine side of a verification (VerifyDatabase): how a throw-away container of the
 * database's image is configured, how it is known to accept connections, and the query
 * that lists the restored tables with exact row counts as one JSON line. Like
 * tool-commands.ts, each is a fixed `sh -c` script with the database as `"$1"` (and a
 * fixed query as `"$2"`). MongoDB's fixed scripts read the database's name from the
 * variable SKIFF_DATABASE (set from `"$1"`): it is never part of a script's text.
 */
import { DatabaseEngine } from '@skiff/proto';
import { type ToolCommand, restoreCommand } from './tool-commands.js';

const script = (body: string, database: string): string[] => ['sh', '-c', body, 'sh', database];
/** A script whose query is its second positional parameter (`"$2"`): the shell never parses it. */
const query = (body: string, database: string, sql: string): string[] => [...script(body, database), sql];

const MYSQL_PWD = 'MYSQL_PWD="${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}"';
/** mongosh as the image's root user, over loopback TCP, running the fixed script `"$2"`. */
const MONGOSH =
  'SKIFF_DATABASE="$1" exec mongosh --quiet --host 127.0.0.1 --port 27017 ' +
  '--username "$MONGO_INITDB_ROOT_USERNAME" --password "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin --eval "$2"';

/**
 * PostgreSQL: every ordinary and partitioned table outside the system schemas, counted with
 * `count(*)` through query_to_xml (dynamic SQL inside one statement), as a JSON array.
 */
const PG_COUNTS =
  "SELECT coalesce(json_agg(json_build_object('name', t.name, 'rows', t.n) ORDER BY t.name), '[]') FROM (" +
  "SELECT n.nspname || '.' || c.relname AS name, " +
  "(xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', n.nspname, c.relname), false, true, '')))[1]::text::bigint AS n " +
  'FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace ' +
  "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%') t";

/**
 * MariaDB and MySQL: one UNION ALL of `COUNT(*)` per base table of the database (names
 * quoted with their backticks doubled), prepared and run, as a JSON array.
 */
const MYSQL_COUNTS =
  'SET SESSION group_concat_max_len = 16777216; ' +
  "SELECT GROUP_CONCAT(CONCAT('SELECT ', QUOTE(table_name), ' AS name, COUNT(*) AS n FROM `', REPLACE(table_name, '`', '``'), '`') SEPARATOR ' UNION ALL ') INTO @q " +
  "FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'; " +
  "SET @q = IF(@q IS NULL, 'SELECT ''[]''', CONCAT('SELECT JSON_ARRAYAGG(JSON_OBJECT(''name'', name, ''rows'', n)) FROM (', @q, ') t')); " +
  'PREPARE counts FROM @q; EXECUTE counts;';

/**
 * MongoDB: the image's entrypoint first runs a temporary server without access control on
 * the same loopback port (to create the root user), then the final one with `--auth`; only
 * the final one is ready.
 */
const MONGO_READY =
  "const opts = db.adminCommand({ getCmdLineOpts: 1 }); " +
  "quit(db.adminCommand({ ping: 1 }).ok === 1 && opts.parsed.security && opts.parsed.security.authorization === 'enabled' ? 0 : 1)";

/**
 * MongoDB: every collection (and time series) of the database outside `system.*`, counted
 * exactly with countDocuments, as a JSON array.
 */
const MONGO_COUNTS =
  'const d = db.getSiblingDB(process.env.SKIFF_DATABASE); ' +
  "const names = d.getCollectionInfos({ type: { $in: ['collection', 'timeseries'] } }, { nameOnly: true }).map((c) => c.name).filter((n) => !n.startsWith('system.')).sort(); " +
  'print(JSON.stringify(names.map((n) => ({ name: n, rows: d.getCollection(n).countDocuments({}) }))));';

/** The variables of a throw-away container: the official images' names, a one-time password. */
export function scratchEnv(engine: DatabaseEngine, database: string, password: string): string[] | null {
  switch (engine) {
    case DatabaseEngine.DATABASE_ENGINE_POSTGRES:
      return [`POSTGRES_PASSWORD=${password}`, `POSTGRES_DB=${database}`];
    case DatabaseEngine.DATABASE_ENGINE_MARIADB:
      return [`MARIADB_ROOT_PASSWORD=${password}`, `MARIADB_DATABASE=${database}`];
    case DatabaseEngine.DATABASE_ENGINE_MYSQL:
      return [`MYSQL_ROOT_PASSWORD=${password}`, `MYSQL_DATABASE=${database}`];
    case DatabaseEngine.DATABASE_ENGINE_MONGO:
      return ['MONGO_INITDB_ROOT_USERNAME=root', `MONGO_INITDB_ROOT_PASSWORD=${password}`, `MONGO_INITDB_DATABASE=${database}`];
    case DatabaseEngine.DATABASE_ENGINE_LIBSQL:
      // One database per server, no credentials: the container has no network but loopback.
      return ['SQLD_NODE=primary', 'SQLD_HTTP_LISTEN_ADDR=127.0.0.1:8080'];
    default:
      return null;
  }
}

/**
 * Succeeds once the image's final server accepts connections. Over TCP on loopback: the
 * images' entrypoints first run a temporary server on the socket only, then restart it.
 */
export function readyCommand(engine: DatabaseEngine, database: string): ToolCommand | null {
  switch (engine) {
    case DatabaseEngine.DATABASE_ENGINE_POSTGRES:
      return { tool: 'pg_isready', argv: script('exec pg_isready -q -h 127.0.0.1 -U "${POSTGRES_USER:-postgres}" -d "$1"', database) };
    case DatabaseEngine.DATABASE_ENGINE_MARIADB:
      return { tool: 'mariadb', argv: script(`${MYSQL_PWD} exec mariadb -uroot -h127.0.0.1 -e 'SELECT 1' "$1"`, database) };
    case DatabaseEngine.DATABASE_ENGINE_MYSQL:
      return { tool: 'mysql', argv: script(`${MYSQL_PWD} exec mysql -uroot -h127.0.0.1 -e 'SELECT 1' "$1"`, database) };
    case DatabaseEngine.DATABASE_ENGINE_MONGO:
      return { tool: 'mongosh', argv: query(MONGOSH, database, MONGO_READY) };
    default:
      return null;
  }
}

/** Writes the tables of the database and their row counts, as one JSON array of `{name, rows}`. */
export function countCommand(engine: DatabaseEngine, database: string): ToolCommand | null {
  switch (engine) {
    case DatabaseEngine.DATABASE_ENGINE_POSTGRES:
      return { tool: 'psql', argv: query('exec psql -X -q -A -t -v ON_ERROR_STOP=1 -U "${POSTGRES_USER:-postgres}" -d "$1" -c "$2"', database, PG_COUNTS) };
    case DatabaseEngine.DATABASE_ENGINE_MARIADB:
      return { tool: 'mariadb', argv: query(`${MYSQL_PWD} exec mariadb -uroot -N -B -r -e "$2" "$1"`, database, MYSQL_COUNTS) };
    case DatabaseEngine.DATABASE_ENGINE_MYSQL:
      return { tool: 'mysql', argv: query(`${MYSQL_PWD} exec mysql -uroot -N -B -r -e "$2" "$1"`, database, MYSQL_COUNTS) };
    case DatabaseEngine.DATABASE_ENGINE_MONGO:
      return { tool: 'mongosh', argv: query(MONGOSH, database, MONGO_COUNTS) };
    default:
      return null;
  }
}

const ENGINE_NAMES: Partial<Record<DatabaseEngine, string>> = {
  [DatabaseEngine.DATABASE_ENGINE_POSTGRES]: 'PostgreSQL',
  [DatabaseEngine.DATABASE_ENGINE_MARIADB]: 'MariaDB',
  [DatabaseEngine.DATABASE_ENGINE_MYSQL]: 'MySQL',
  [DatabaseEngine.DATABASE_ENGINE_MONGO]: 'MongoDB',
  [DatabaseEngine.DATABASE_ENGINE_LIBSQL]: 'libSQL',
};

/** The engine's name, in reasons. */
export const engineName = (engine: DatabaseEngine): string => ENGINE_NAMES[engine] ?? 'this engine';

/**
 * The programs a verification of `engine` runs in its image (ready, restore, count; libSQL's server), sorted:
 * an image that lacks one runs another engine than the backup's. Null for an engine it cannot verify.
 */
export function verifyTools(engine: DatabaseEngine, database: string): string[] | null {
  // libsql-server is reached over its HTTP API (libsql-http.ts): the image needs only the server.
  if (engine === DatabaseEngine.DATABASE_ENGINE_LIBSQL) return ['sqld'];
  const commands = [readyCommand(engine, database), restoreCommand(engine, database), countCommand(engine, database)];
  if (commands.some((c) => c === null)) return null;
  return [...new Set(commands.map((c) => c!.tool))].sort();
}

/** The counts the count command wrote, by name; throws naming what it got instead. */
export function parseCounts(output: string): { name: string; rows: string }[] {
  const text = output.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text || 'null');
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || !parsed.every((t) => typeof t?.name === 'string' && Number.isSafeInteger(Number(t.rows)))) {
    throw new Error(`the table counts could not be read: ${JSON.stringify(text.slice(0, 200))}`);
  }
  return parsed
    .map((t: { name: string; rows: number | string }) => ({ name: t.name, rows: String(t.rows) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
