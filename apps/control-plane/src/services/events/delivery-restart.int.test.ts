// Delivery survives the death of the process delivering (issue 16): a worker process killed
// with SIGKILL mid-stream leaves claimed deliveries that another process claims again once
// their lease passed; every event arrives exactly once at a sink that de-duplicates by the
// idempotency key, at least once at one that does not.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { spawnOwned, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventSink } from '../../testing/event-sink.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const EVENTS = 30;
const secretKey = randomBytes(32);
const script = fileURLToPath(new URL('../../testing/delivery-process.ts', import.meta.url));

let t: TestPlatform;
let sink: EventSink;
const children: ChildProcess[] = [];
beforeAll(async () => {
  sink = await EventSink.start();
  // No worker in this process: the deliveries are the child processes' work.
  t = await startTestPlatform({ secretKey, events: { start: false } });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await t?.close();
  await sink?.close();
});

function startWorker(): ChildProcess {
  const child = spawnOwned(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, SKIFF_TEST_DELIVERY_DB: t.databaseUrl, SKIFF_TEST_DELIVERY_KEY: secretKey.toString('hex') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.resume();
  child.stderr!.resume();
  children.push(child);
  return child;
}

const hook = async (path: string) => {
  const url = `${sink.url}${path}`;
  t.watch.secret(url);
  const r = await t.call('notification.createHook', {
    name: path, webhookUrl: url, channel: '#ops', serverThreshold: true,
    appBuildError: false, databaseBackup: false, platformBackup: false, volumeBackup: false, platformRestart: false, appDeploy: false, containerCleanup: false,
  });
  expect(r.status).toBe(200);
  return r.body.notificationId as string;
};

it('delivers every event after a kill -9 of the delivering process: once where de-duplicated, at least once elsewhere', async () => {
  const deduped = await hook('/dedupe');
  await hook('/plain');
  sink.dedupeOn('/dedupe');
  sink.slow('/dedupe', 40);
  sink.slow('/plain', 40);
  const { token } = (await t.call('user.getMetricsToken', {})).body;
  t.watch.secret(token);
  for (let i = 0; i < EVENTS; i++) {
    const r = await t.as(null)('notification.receiveNotification', { Type: 'CPU', Value: 90 + i / 10, Threshold: 85, Message: `alert ${i}`, Timestamp: 'now', Token: token });
    expect(r.status).toBe(200);
  }

  const first = startWorker();
  await waitFor(() => sink.at('/dedupe').length >= 5, { timeoutMs: 30_000, what: 'the first worker to deliver some' });
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const delivered = await t.db.selectFrom('eventDeliveries').select('id').where('status', '=', 'delivered').execute();
  expect(delivered.length).toBeLessThan(2 * EVENTS);

  startWorker();
  await waitFor(
    async () => (await t.db.selectFrom('eventDeliveries').select('id').where('status', '!=', 'delivered').execute()).length === 0,
    { timeoutMs: 60_000, intervalMs: 200, what: 'every delivery done by the second worker' },
  );

  const ids = (await t.db.selectFrom('eventDeliveries').select('id').where('notificationId', '=', deduped).execute()).map((r) => r.id).sort();
  expect(ids).toHaveLength(EVENTS);
  const received = sink.at('/dedupe').map((r) => r.idempotencyKey).sort();
  expect(received).toEqual(ids);
  const messages = (path: string) => new Set(sink.at(path).map((r) => r.body.text));
  expect(messages('/plain').size).toBe(EVENTS);
  expect(messages('/dedupe').size).toBe(EVENTS);
}, 120_000);
