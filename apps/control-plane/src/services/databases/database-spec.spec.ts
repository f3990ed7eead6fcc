// The Swarm service the agent would create for each engine, as golden files: MySQL, MongoDB
// and libSQL cannot run on the test machines, so their specs are checked here exactly.
import type { DatabaseEngine, DatabaseService } from '@skiff/db';
import { envList, swarmServiceSpec } from '@skiff/domain';
import { describe, expect, it } from 'vitest';
import { connectionUrls, databaseVariables, databaseWorkloadSpec } from './database-spec.js';
import type { Credentials } from './engines.js';

const row = (engine: DatabaseEngine, overrides: Partial<DatabaseService> = {}): DatabaseService => ({
  id: `dbs_${engine}`,
  environmentId: 'env_1',
  name: engine,
  appName: `shop-${engine}`,
  description: null,
  serverId: null,
  env: 'sealed',
  applicationStatus: 'idle',
  createdAt: new Date('2026-12-05T16:00:00Z'),
  engine,
  containerImage: 'image:1',
  databaseName: engine === 'libsql' ? null : 'shop',
  databaseUser: 'shop',
  databasePassword: 'sealed',
  rootPassword: null,
  replicaSet: false,
  deployCount: 1,
  command: null,
  args: null,
  externalPort: 40000,
  networkIds: null,
  detachPlatformNetwork: false,
  replicas: 1,
  memoryReservation: null,
  memoryLimit: null,
  cpuReservation: null,
  cpuLimit: null,
  healthCheckCluster: null,
  restartPolicyCluster: null,
  placementCluster: null,
  updateConfigCluster: null,
  rollbackConfigCluster: null,
  modeCluster: null,
  labelsCluster: null,
  networkCluster: null,
  stopGracePeriodCluster: null,
  endpointSpecCluster: null,
  ulimitsCluster: null,
  ...overrides,
});

const credentials = (r: DatabaseService): Credentials => ({
  databaseName: r.databaseName,
  databaseUser: r.databaseUser,
  password: 'p@ss "w0rd"',
  rootPassword: r.engine === 'mariadb' || r.engine === 'mysql' ? 'r00t' : null,
});

/** The engine's service spec with its variables, as the agent would send it to the engine. */
function golden(r: DatabaseService) {
  const c = credentials(r);
  const env = databaseVariables(r, c, new Map([['TZ', 'UTC']]));
  return { spec: swarmServiceSpec({ ...databaseWorkloadSpec(r, c, 3), env: envList(env) }), urls: connectionUrls(r, '203.0.113.9') };
}

describe('database service specs', () => {
  for (const engine of ['postgres', 'mariadb', 'mysql', 'mongo', 'libsql'] as const) {
    it(`${engine}: image, engine variables, data volume, published port, health check`, async () => {
      await expect(JSON.stringify(golden(row(engine)), null, 2) + '\n').toMatchFileSnapshot(`__golden__/${engine}.json`);
    });
  }

  it('mongo with a replica set: the key file script, the replica options and the initiating health check', async () => {
    const r = row('mongo', { replicaSet: true, args: ['--wiredTigerCacheSizeGB', '1'] });
    await expect(JSON.stringify(golden(r), null, 2) + '\n').toMatchFileSnapshot('__golden__/mongo-replica-set.json');
  });

  it("keeps the service's own health check and command over the engine's", () => {
    const own = { Test: ['CMD', 'true'] };
    const r = row('postgres', { healthCheckCluster: own, command: 'postgres', args: ['-c', 'max_connections=50'] });
    const spec = databaseWorkloadSpec(r, credentials(r), 1);
    expect(spec.healthCheckCluster).toEqual(own);
    expect([spec.command, spec.args]).toEqual(['postgres', ['-c', 'max_connections=50']]);
  });

  it('sets the credentials from the settings over variables of the same name in env', () => {
    const r = row('mysql');
    const env = databaseVariables(r, credentials(r), new Map([['MYSQL_PASSWORD', 'mine'], ['MYSQL_ROOT_PASSWORD', 'mine']]));
    expect([env.get('MYSQL_PASSWORD'), env.get('MYSQL_ROOT_PASSWORD')]).toEqual(['p@ss "w0rd"', 'r00t']);
  });

  it('has no external connection string without a published port or a known address', () => {
    expect(connectionUrls(row('postgres', { externalPort: null }), '203.0.113.9').externalConnectionUrl).toBeNull();
    expect(connectionUrls(row('postgres'), null).externalConnectionUrl).toBeNull();
  });
});
