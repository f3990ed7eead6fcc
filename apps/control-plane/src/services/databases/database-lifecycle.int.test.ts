// The answers of the database services' lifecycle that name the service, pinned word for word
// (they come from the lifecycle caches share, services/stateful): work on a service never
// deployed, reload under another appName, work while a removal is under way, another
// engine's id, and a removal that keeps the data volume.
import { Command } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;

beforeAll(async () => {
  t = await startTestPlatform();
  env = (await t.call('project.create', { name: 'database-answers' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

/** Calls `op` and answers its status with the message (and the fields its issues name). */
const answer = async (op: string, input: Record<string, unknown>) => {
  const { status, body } = await t.call(op, input);
  return { status, message: body.message as string, fields: (body.issues ?? []).map((i: { path: unknown[] }) => i.path[0]) };
};
const created = async (name: string) => {
  const r = await t.call('dbA.create', { name, environmentId: env });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { dbAId: string; appName: string };
};
const removals = async (id: string) => {
  const rows = await t.db.selectFrom('commands').select('payload').where('workloadKey', '=', `database:${id}`).orderBy('position').execute();
  const outbox = new CommandOutbox(t.platform.secrets);
  return rows.map((r) => Command.decode(outbox.open(r.payload)).payload).filter((p) => p?.$case === 'removeWorkload');
};

describe('database services: what the lifecycle answers', () => {
  it('refuses work on a service never deployed, naming it, and reload under another appName', async () => {
    const db = await created('never');
    for (const op of ['dbA.start', 'dbA.stop']) {
      expect(await answer(op, { dbAId: db.dbAId }), op).toMatchObject({ status: 400, message: `Database service ${db.appName} was never deployed: deploy it first` });
    }
    expect(await answer('dbA.reload', { dbAId: db.dbAId, appName: db.appName })).toMatchObject({ status: 400, message: `Database service ${db.appName} was never deployed: deploy it first` });
    expect(await answer('dbA.reload', { dbAId: db.dbAId, appName: 'other' })).toMatchObject({ status: 400, fields: ['appName'] });
  });

  it('answers another engine’s id as NOT_FOUND naming the engine', async () => {
    const db = await created('pg-only');
    for (const op of ['dbB.deploy', 'dbB.remove']) {
      expect(await answer(op, { dbBId: db.dbAId }), op).toMatchObject({ status: 404, message: 'No such MariaDB service' });
    }
  });

  it('refuses work while a removal is under way, and keeps the volume when deleteVolume is false', async () => {
    const db = await created('going');
    expect((await t.call('dbA.deploy', { dbAId: db.dbAId })).status).toBe(200);
    expect((await t.call('dbA.remove', { dbAId: db.dbAId, deleteVolume: false })).status).toBe(200);
    for (const [op, input] of [
      ['dbA.deploy', { dbAId: db.dbAId }],
      ['dbA.start', { dbAId: db.dbAId }],
      ['dbA.saveExternalPort', { dbAId: db.dbAId, externalPort: 15499 }],
    ] as const) {
      expect(await answer(op, input), op).toMatchObject({ status: 400, message: `Database service ${db.appName} is being removed` });
    }
    expect(await removals(db.dbAId)).toEqual([expect.objectContaining({ value: expect.objectContaining({ removeVolumes: false }) })]);
  });
});
