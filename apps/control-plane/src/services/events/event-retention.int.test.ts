// Event retention: the delivery worker deletes, in the background and in batches, events older
// than the retention whose deliveries all ended, with those deliveries; one with a delivery
// still pending stays. A stream resumed from before what was deleted says so first
// (`event: pruned`), then goes on with the oldest event kept.
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventSink, jsonSender } from '../../testing/event-sink.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { SseReader } from '../../testing/sse-reader.js';
import { pruneEvents } from './event-retention.js';
import { recordEvent } from './events.js';

const RETENTION_MS = 3000;
const NO_FLAGS = {
  appBuildError: false,
  databaseBackup: false,
  platformBackup: false,
  volumeBackup: false,
  platformRestart: false,
  appDeploy: false,
  containerCleanup: false,
  serverThreshold: false,
};

let t: TestPlatform;
let sink: EventSink;
beforeAll(async () => {
  sink = await EventSink.start();
  t = await startTestPlatform({
    events: {
      senders: { hook: jsonSender },
      // A failed delivery waits a minute: it stays pending for the whole test.
      worker: { pollMs: 100, backoff: { minMs: 60_000, maxMs: 60_000 }, retentionMs: RETENTION_MS, pruneEveryMs: 200 },
      stream: { heartbeatMs: 300, pollMs: 200 },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

async function channel(path: string, flags: Partial<typeof NO_FLAGS>) {
  const url = `${sink.url}${path}`;
  t.watch.secret(url);
  const r = await t.call('notification.createHook', { ...NO_FLAGS, ...flags, name: path, webhookUrl: url, channel: '#ops' });
  expect(r.status).toBe(200);
  return r.body.notificationId as string;
}

const eventsOf = (kind: string) => t.db.selectFrom('events').select('id').where('organizationId', '=', t.organizationId).where('kind', '=', kind).orderBy('id').execute();

it('deletes old events with their ended deliveries, keeps one still being delivered, and a resumed stream says what is gone', async () => {
  await channel('/ok', { serverThreshold: true });
  const down = await channel('/down', { appDeploy: true });
  sink.answer('/down', ...Array<number>(20).fill(500));
  const { token } = (await t.call('user.getMetricsToken', {})).body;
  t.watch.secret(token);
  for (let i = 0; i < 5; i++) {
    const r = await t.as(null)('notification.receiveNotification', { Type: 'CPU', Value: 91, Threshold: 85, Message: `alert ${i}`, Timestamp: 'now', Token: token });
    expect(r.status).toBe(200);
  }
  const thresholds = (await eventsOf('serverThreshold')).map((e) => String(e.id));
  expect(thresholds).toHaveLength(5);
  await t.db.transaction().execute((tx) => recordEvent(tx, { organizationId: t.organizationId, kind: 'appDeploy', outcome: 'success', summary: { subject: 'kept' } }));
  t.platform.events.signal.notify();

  // Delivered, then deleted by the worker once older than the retention, deliveries included.
  await waitFor(() => sink.at('/ok').length === 5, { timeoutMs: 15_000, what: 'the five threshold messages' });
  await waitFor(async () => (await eventsOf('serverThreshold')).length === 0, { timeoutMs: 15_000, intervalMs: 100, what: 'the worker to delete the delivered events' });
  const left = await t.db.selectFrom('eventDeliveries').select(['eventId', 'status', 'notificationId']).where('organizationId', '=', t.organizationId).execute();
  expect(left.filter((d) => thresholds.includes(String(d.eventId)))).toEqual([]);
  // The appDeploy event keeps its pending delivery, so it stays.
  const kept = await eventsOf('appDeploy');
  expect(kept).toHaveLength(1);
  expect(left).toEqual([{ eventId: kept[0]!.id, status: 'pending', notificationId: down }]);
  const mark = await t.db.selectFrom('eventPruneMarks').select('prunedThrough').where('organizationId', '=', t.organizationId).executeTakeFirstOrThrow();
  expect(String(mark.prunedThrough)).toBe(thresholds[4]);

  const open = (lastEventId: string) => t.platform.app.request('http://skiff.test/api/events', { headers: { 'x-api-key': t.ownerKey, 'last-event-id': lastEventId } });
  const gap = new SseReader(await open(String(BigInt(thresholds[0]!) - 1n)));
  await gap.until((r) => r.events.length >= 2, 'the pruned notice and the kept event');
  expect(gap.events[0]!.event).toBe('pruned');
  expect(gap.events[0]!.id).toBeUndefined();
  expect(JSON.parse(gap.events[0]!.data!)).toMatchObject({ prunedThrough: thresholds[4], resumesWith: String(kept[0]!.id) });
  expect(gap.events[1]).toMatchObject({ id: String(kept[0]!.id), event: 'appDeploy' });
  await gap.cancel();
  // Resumed from the newest deleted id or later: nothing was missed, no notice.
  const whole = new SseReader(await open(thresholds[4]!));
  await whole.until((r) => r.events.length >= 1 && r.comments.includes('heartbeat'), 'the kept event and a heartbeat');
  expect(whole.events.map((e) => e.event)).toEqual(['appDeploy']);
  await whole.cancel();
}, 60_000);

it('deletes in batches and stops between them when asked', async () => {
  // Not subscribed by any channel, recorded now: the worker leaves them for RETENTION_MS.
  await t.db.transaction().execute(async (tx) => {
    for (let i = 0; i < 5; i++) await recordEvent(tx, { organizationId: t.organizationId, kind: 'volumeBackup', outcome: 'success', summary: { subject: `b${i}` } });
  });
  const later = new Date(Date.now() + 60_000);
  expect(await pruneEvents(t.db, later, { batchSize: 2, stopped: () => true })).toBe(2);
  expect(await eventsOf('volumeBackup')).toHaveLength(3);
  expect(await pruneEvents(t.db, later, { batchSize: 2 })).toBe(3);
  expect(await eventsOf('volumeBackup')).toHaveLength(0);
  // The event with a pending delivery is never deleted, however old.
  expect(await eventsOf('appDeploy')).toHaveLength(1);
});

it('a resumed stream\'s pruned notice speaks of its own organization only: no other organization\'s ids', async () => {
  const keyOf = async (name: string) => {
    const org = (await t.call('organization.create', { name })).body.organizationId as string;
    const key = t.watch.secret((await t.call('user.createApiKey', { name, metadata: { organizationId: org } })).body.key as string);
    return { org, key };
  };
  const x = await keyOf('Retention X');
  const y = await keyOf('Retention Y');
  const record = (organizationId: string, subject: string) =>
    t.db.transaction().execute(async (tx) => {
      await recordEvent(tx, { organizationId, kind: 'volumeBackup', outcome: 'success', summary: { subject } });
      return (await tx.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id;
    });
  // Interleaved ids; Y's newest deleted event is after X's.
  const x1 = String(await record(x.org, 'x1'));
  const y1 = String(await record(y.org, 'y1'));
  const x2 = String(await record(x.org, 'x2'));
  const y2 = String(await record(y.org, 'y2'));
  await pruneEvents(t.db, new Date(Date.now() + 60_000));
  const y3 = String(await record(y.org, 'y3'));
  const x3 = String(await record(x.org, 'x3'));

  const open = (key: string, lastEventId: string) => t.platform.app.request('http://skiff.test/api/events', { headers: { 'x-api-key': key, 'last-event-id': lastEventId } });
  const gap = new SseReader(await open(x.key, String(BigInt(x1) - 1n)));
  await gap.until((r) => r.events.length >= 2, 'the pruned notice and X\'s kept event');
  const notice = JSON.parse(gap.events[0]!.data!) as Record<string, unknown>;
  expect(gap.events[0]!.event).toBe('pruned');
  expect(Object.keys(notice).sort()).toEqual(['lastEventId', 'message', 'prunedThrough', 'resumesWith']);
  expect(notice).toMatchObject({ prunedThrough: x2, resumesWith: x3 });
  for (const theirs of [y1, y2, y3]) expect(gap.events[0]!.data).not.toContain(`"${theirs}"`);
  expect(gap.events.slice(1).map((e) => e.id)).toEqual([x3]);
  await gap.cancel();
  // An organization nothing was deleted of after the given id gets no notice, whatever others lost.
  const z = await keyOf('Retention Z');
  const quiet = new SseReader(await open(z.key, x1));
  await quiet.until((r) => r.comments.includes('heartbeat'), 'a heartbeat');
  expect(quiet.events).toEqual([]);
  await quiet.cancel();
}, 30_000);
