import { CommandKind, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { dumpDatabaseCommand, restoreDatabaseCommand } from './database-dump.js';
import { commandKindOf } from './index.js';

const object = { endpoint: 'https://s3.example.com', region: 'eu-west-1', bucket: 'b', key: 'p/bkp_1/t.sql.gz', accessKey: 'AK', secretKey: 'SK', passphrase: '' };
const at = new Date('2026-12-07T14:00:00Z');

describe('the database dump kind', () => {
  it('names a compose stack’s service on its own workload queue, and a database service on its', () => {
    const compose = dumpDatabaseCommand({
      commandId: 'cmd_1',
      target: { type: 'compose', id: 'cmp_1', appName: 'shop', serverId: null, serviceName: 'db', engine: DatabaseEngine.DATABASE_ENGINE_MARIADB, database: 'shop' },
      object,
      createdAt: at,
      deadline: at,
    });
    expect(compose).toMatchObject({ kind: CommandKind.COMMAND_KIND_DUMP_DATABASE, workloadKey: 'compose:cmp_1', serverId: 'local' });
    expect(compose.payload).toEqual({
      $case: 'dumpDatabase',
      value: { target: { workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'cmp_1', appName: 'shop' }, serviceName: 'db', engine: DatabaseEngine.DATABASE_ENGINE_MARIADB, database: 'shop' }, object },
    });
    const restore = restoreDatabaseCommand({
      commandId: 'cmd_2',
      target: { type: 'database', id: 'dbs_1', appName: 'orders', serverId: 'srv_1', serviceName: null, engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'app' },
      object,
      createdAt: at,
      deadline: at,
    });
    expect(restore).toMatchObject({ kind: CommandKind.COMMAND_KIND_RESTORE_DATABASE, workloadKey: 'database:dbs_1', serverId: 'srv_1' });
    expect(restore.payload?.$case).toBe('restoreDatabase');
    for (const command of [compose, restore]) expect(commandKindOf({ kind: CommandKind[command.kind], workloadKey: command.workloadKey })?.name).toBe('database dump');
  });
});
