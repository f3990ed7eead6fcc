import { createHash } from 'node:crypto';
import type { DatabaseEngine, DatabaseService } from '@skiff/db';
import type { HealthCheckConfig } from '@skiff/domain';

/** What a service's settings give its engine: names as stored, passwords opened. */
export interface Credentials {
  databaseName: string | null;
  databaseUser: string | null;
  password: string;
  rootPassword: string | null;
}

/**
 * One database engine: where it listens and keeps its data, the variables of its official
 * image that create the database and users at the first start, its health check, and its
 * connection string. Commands are argument lists (no shell), or fixed scripts that read
 * only variables.
 */
export interface Engine {
  engine: DatabaseEngine;
  router: 'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE';
  label: string;
  defaultImage: string;
  port: number;
  dataDir: string;
  takesDatabaseName: boolean;
  takesRootPassword: boolean;
  takesReplicaSet: boolean;
  variables(c: Credentials, row: Pick<DatabaseService, 'replicaSet' | 'appName'>): Map<string, string>;
  healthCheck(c: Credentials, row: Pick<DatabaseService, 'replicaSet'>): HealthCheckConfig | null;
  /** The process when the service sets no `command`; null: the image's own. */
  process(row: Pick<DatabaseService, 'replicaSet' | 'args'>): { command: string | null; args: string[] | null } | null;
  /** `host:port` → connection string, without a password. */
  url(hostPort: string, row: Pick<DatabaseService, 'databaseName' | 'databaseUser' | 'replicaSet'>): string;
}

const SECOND = 1_000_000_000;
const health = (test: string[]): HealthCheckConfig => ({ Test: test, Interval: 5 * SECOND, Timeout: 5 * SECOND, Retries: 10, StartPeriod: 30 * SECOND });

const mysqlLike = (engine: 'mariadb' | 'mysql', prefix: 'MARIADB' | 'MYSQL', admin: string): Omit<Engine, 'router' | 'label' | 'defaultImage'> => ({
  engine,
  port: 3306,
  dataDir: '/var/lib/mysql',
  takesDatabaseName: true,
  takesRootPassword: true,
  takesReplicaSet: false,
  variables: (c) =>
    new Map([
      [`${prefix}_ROOT_PASSWORD`, c.rootPassword ?? ''],
      [`${prefix}_DATABASE`, c.databaseName ?? ''],
      [`${prefix}_USER`, c.databaseUser ?? ''],
      [`${prefix}_PASSWORD`, c.password],
    ]),
  // `ping` answers 0 whenever the server runs, even when access is denied: no credentials needed.
  healthCheck: () => health(['CMD', admin, 'ping', '-h', '127.0.0.1', '--silent']),
  process: () => null,
  url: (hostPort, row) => `mysql://${row.databaseUser}@${hostPort}/${row.databaseName}`,
});

/** The MongoDB replica set's name, and where its key file is written (on the data volume). */
export const MONGO_REPLICA_SET = 'rs0';
const MONGO_KEYFILE = '/data/db/.skiff-keyfile';
/** Carries the replica set's key file content (derived from the password) into the container. */
export const MONGO_KEYFILE_VARIABLE = 'SKIFF_MONGO_KEYFILE';
/** The replica set member's address (`<appName>:27017` on the platform network), read by the health check. */
export const MONGO_HOST_VARIABLE = 'SKIFF_MONGO_HOST';

/**
 * A replica set with authentication needs a key file owned by mongod's user: this fixed
 * script writes it from SKIFF_MONGO_KEYFILE and runs the official entrypoint with the
 * options as positional parameters (never parsed by the shell).
 */
export const MONGO_REPLICA_SCRIPT =
  `umask 077; printf '%s' "$${MONGO_KEYFILE_VARIABLE}" > ${MONGO_KEYFILE}; chown mongodb:mongodb ${MONGO_KEYFILE} 2>/dev/null; ` +
  'exec docker-entrypoint.sh mongod "$@"';

/**
 * Pings the server, and initiates the one-member replica set the first time (from a fixed
 * script: the credentials are read from the container's variables).
 */
export const MONGO_REPLICA_HEALTH =
  'mongosh --quiet -u "$MONGO_INITDB_ROOT_USERNAME" -p "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin --eval ' +
  `"try { rs.status().ok } catch (e) { rs.initiate({ _id: '${MONGO_REPLICA_SET}', members: [{ _id: 0, host: process.env.${MONGO_HOST_VARIABLE} }] }).ok }"`;

export const ENGINES: Record<DatabaseEngine, Engine> = {
  postgres: {
    engine: 'postgres',
    router: 'dbA',
    label: 'PostgreSQL',
    defaultImage: 'postgres:17',
    port: 5432,
    dataDir: '/var/lib/postgresql/data',
    takesDatabaseName: true,
    takesRootPassword: false,
    takesReplicaSet: false,
    variables: (c) =>
      new Map([
        ['POSTGRES_PASSWORD', c.password],
        ['POSTGRES_USER', c.databaseUser ?? ''],
        ['POSTGRES_DB', c.databaseName ?? ''],
      ]),
    healthCheck: (c) => health(['CMD', 'pg_isready', '-h', '127.0.0.1', '-U', c.databaseUser ?? '', '-d', c.databaseName ?? '']),
    process: () => null,
    url: (hostPort, row) => `postgresql://${row.databaseUser}@${hostPort}/${row.databaseName}`,
  },
  mariadb: { ...mysqlLike('mariadb', 'MARIADB', 'mariadb-admin'), router: 'dbB', label: 'MariaDB', defaultImage: 'mariadb:11' },
  mysql: { ...mysqlLike('mysql', 'MYSQL', 'mysqladmin'), router: 'dbC', label: 'MySQL', defaultImage: 'mysql:8' },
  mongo: {
    engine: 'mongo',
    router: 'dbD',
    label: 'MongoDB',
    defaultImage: 'mongo:7',
    port: 27017,
    dataDir: '/data/db',
    takesDatabaseName: true,
    takesRootPassword: false,
    takesReplicaSet: true,
    variables: (c, row) => {
      const vars = new Map([
        ['MONGO_INITDB_ROOT_USERNAME', c.databaseUser ?? ''],
        ['MONGO_INITDB_ROOT_PASSWORD', c.password],
        ['MONGO_INITDB_DATABASE', c.databaseName ?? ''],
      ]);
      if (row.replicaSet) {
        vars.set(MONGO_KEYFILE_VARIABLE, createHash('sha256').update(`skiff-mongo-keyfile:${c.password}`).digest('base64'));
        vars.set(MONGO_HOST_VARIABLE, `${row.appName}:27017`);
      }
      return vars;
    },
    healthCheck: (_c, row) => mongoHealth(row),
    process: (row) =>
      row.replicaSet
        ? { command: null, args: ['/bin/sh', '-c', MONGO_REPLICA_SCRIPT, 'sh', '--replSet', MONGO_REPLICA_SET, '--keyFile', MONGO_KEYFILE, '--bind_ip_all', ...(row.args ?? [])] }
        : null,
    url: (hostPort, row) =>
      `mongodb://${row.databaseUser}@${hostPort}/${row.databaseName}?authSource=admin${row.replicaSet ? `&replicaSet=${MONGO_REPLICA_SET}` : ''}`,
  },
  libsql: {
    engine: 'libsql',
    router: 'dbE',
    label: 'libSQL',
    defaultImage: 'ghcr.io/tursodatabase/libsql-server',
    port: 8080,
    dataDir: '/var/lib/sqld',
    takesDatabaseName: false,
    takesRootPassword: false,
    takesReplicaSet: false,
    variables: (c) =>
      new Map([
        ['SQLD_NODE', 'primary'],
        ['SQLD_HTTP_LISTEN_ADDR', '0.0.0.0:8080'],
        ['SQLD_HTTP_AUTH', `basic:${Buffer.from(`${c.databaseUser ?? ''}:${c.password}`).toString('base64')}`],
      ]),
    // The image carries no client to probe its HTTP port with; Swarm watches the process.
    healthCheck: () => null,
    process: () => null,
    url: (hostPort, row) => `http://${row.databaseUser}@${hostPort}`,
  },
};

/** MongoDB's health check: the fixed ping, or with a replica set the script that also initiates it. */
export function mongoHealth(row: Pick<DatabaseService, 'replicaSet'>): HealthCheckConfig {
  return row.replicaSet
    ? health(['CMD-SHELL', MONGO_REPLICA_HEALTH])
    : health(['CMD', 'mongosh', '--quiet', '--eval', "quit(db.adminCommand('ping').ok ? 0 : 1)"]);
}

export const ENGINE_OF_ROUTER = Object.fromEntries(Object.values(ENGINES).map((e) => [e.router, e])) as Record<Engine['router'], Engine>;
