// Delivery survives a kill -9 of the real control plane (issue 16): main.ts as tools/up starts
// it, on a Postgres database of the test harness, delivers threshold events to two Slack-style
// webhooks on a slow sink; killed with SIGKILL while a message is on the wire, then started
// again on the same database, it sends what was not recorded once its lease (3 s here) passed.
// Every event arrives exactly once at the sink that de-duplicates by Idempotency-Key, at least
// once at the other, and nothing stays claimed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatabaseHandle, openDatabase } from '@skiff/db';
import { freePort, freshDatabase, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { EventSink } from '../../testing/event-sink.js';
import { StackProcess } from '../../testing/process-stack.js';

const EVENTS = 12;
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

let sink: EventSink;
let fresh: { url: string; drop: () => Promise<void> };
let handle: DatabaseHandle;
let controlPlane: StackProcess;
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-events-kill-'));
let api = '';
let key = '';

beforeAll(async () => {
  sink = await EventSink.start();
  fresh = await freshDatabase(inject('postgresUrl'));
  handle = await openDatabase({ url: fresh.url, poolSize: 2 });
  const ports = { api: await freePort(), grpc: await freePort() };
  api = `http://127.0.0.1:${ports.api}`;
  controlPlane = new StackProcess(
    'control plane',
    () => [process.execPath, '--import', 'tsx', 'apps/control-plane/src/main.ts'],
    () => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: fresh.url,
      SKIFF_DATA_DIR: dataDir,
      SKIFF_PORT: String(ports.api),
      SKIFF_HOST: '127.0.0.1',
      SKIFF_GRPC_PORT: String(ports.grpc),
      SKIFF_GRPC_HOST: '127.0.0.1',
      // The sink listens on loopback.
      SKIFF_OUTBOUND_ALLOW_PRIVATE: '1',
      SKIFF_EVENT_LEASE_SECONDS: '3',
      LOG_LEVEL: 'info',
    }),
    (mark) => controlPlane.waitForOutput('control plane listening', mark, 120_000),
  );
  await controlPlane.start();
  key = readFileSync(join(dataDir, 'initial-api-key'), 'utf8').trim();
}, 150_000);

afterAll(async () => {
  await controlPlane?.stop('SIGKILL');
  await handle?.close();
  await fresh?.drop();
  await sink?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(operation: string, input: Record<string, unknown>, withKey = true) {
  const res = await fetch(`${api}/api/${operation}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': key } : {}) },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as Record<string, any>;
  expect(res.status, `${operation}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

const hook = async (path: string) =>
  (await call('notification.createHook', { ...NO_FLAGS, serverThreshold: true, name: path.slice(1), webhookUrl: `${sink.url}${path}`, channel: '#ops' })).notificationId as string;

const deliveries = () => handle.db.selectFrom('eventDeliveries').select(['id', 'notificationId', 'status', 'claimedUntil']).execute();

it('delivers every event after a kill -9 of the control plane: exactly once where de-duplicated, at least once elsewhere', async () => {
  const deduped = await hook('/dedupe');
  await hook('/plain');
  sink.dedupeOn('/dedupe');
  sink.slow('/dedupe', 800);
  sink.slow('/plain', 800);
  const token = ((await fetch(`${api}/api/user.getMetricsToken`, { headers: { 'x-api-key': key } }).then((r) => r.json())) as { token: string }).token;
  for (let i = 0; i < EVENTS; i++) {
    await call('notification.receiveNotification', { Type: 'CPU', Value: 90, Threshold: 85, Message: `alert ${i}`, Timestamp: 'now', Token: token }, false);
  }

  // Killed while a message to the de-duplicating sink is on the wire (received, not yet answered).
  await waitFor(() => sink.at('/dedupe').length >= 2 && sink.requests.filter((r) => r.path === '/dedupe').length > sink.at('/dedupe').length, {
    timeoutMs: 60_000,
    intervalMs: 20,
    what: 'a message in flight to the sink after some were delivered',
  });
  await controlPlane.stop('SIGKILL');
  const atKill = await deliveries();
  const stillClaimed = atKill.filter((d) => d.status === 'pending' && d.claimedUntil !== null && d.claimedUntil.getTime() > Date.now());
  expect(stillClaimed.length, 'deliveries the killed process held').toBeGreaterThan(0);
  expect(atKill.filter((d) => d.status === 'delivered').length).toBeLessThan(2 * EVENTS);

  const mark = controlPlane.mark();
  await controlPlane.start();
  await waitFor(async () => (await deliveries()).every((d) => d.status === 'delivered'), {
    timeoutMs: 90_000,
    intervalMs: 250,
    what: `every delivery done after the restart (control plane: ${controlPlane.tail(2000)})`,
  });

  const rows = await deliveries();
  expect(rows).toHaveLength(2 * EVENTS);
  expect(rows.filter((d) => d.claimedUntil !== null)).toEqual([]);
  // The de-duplicating sink: one message per delivery, keyed by the delivery id.
  const ids = rows.filter((d) => d.notificationId === deduped).map((d) => d.id).sort();
  expect(sink.at('/dedupe').map((r) => r.idempotencyKey).sort()).toEqual(ids);
  // What was on the wire at the kill was sent again, with the same key.
  const keys = sink.requests.filter((r) => r.path === '/dedupe').map((r) => r.idempotencyKey);
  expect(keys.length).toBeGreaterThan(new Set(keys).size);
  // The other sink: every event at least once.
  expect(new Set(sink.at('/plain').map((r) => r.body.text)).size).toBe(EVENTS);
  expect(new Set(sink.at('/dedupe').map((r) => r.body.text)).size).toBe(EVENTS);
  // The webhook URLs (secrets) never reached the control plane's output.
  expect(controlPlane.output()).not.toContain(sink.url);
  expect(controlPlane.output(mark)).toContain('control plane listening');
}, 240_000);
