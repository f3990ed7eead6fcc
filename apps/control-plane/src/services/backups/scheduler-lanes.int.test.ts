// The scheduler on a real Postgres with runs of its own: an organization whose scheduled run
// hangs (an offline agent holds a dump up to its 6-hour deadline; a destination that never
// answers) delays its own backups only. Another organization's firings run at their time.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@skiff/testing';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { S3_ACCESS_KEY, startS3 } from '../../testing/s3-server.js';
import { BackupScheduler } from './scheduler.js';

let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
// Whole minutes an hour ahead of the database's clock, which stamps a backup's creation: a
// backup never runs for a firing before it was created, so fixed dates stop firing once past.
const base = Math.ceil(Date.now() / 60_000) * 60_000 + 3_600_000;
const at = (secondsPast: number) => new Date(base + secondsPast * 1000);
let now = at(30);

beforeAll(async () => {
  s3 = await startS3(['lanes']);
  t = await startTestPlatform({ clock: () => now });
});
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

const platformBackup = async (call: TestPlatform['call']) => {
  const destination = (await call('destination.create', { name: 'lanes', endpoint: s3.endpoint, region: 'us-east-1', bucket: 'lanes', accessKey: S3_ACCESS_KEY, secretKey: 'lanes-secret-000' })).body;
  const backup = await call('backup.create', { schedule: '* * * * *', prefix: 'lanes/', destinationId: destination.destinationId, database: 'skiff', databaseType: 'web-server' });
  expect(backup.status, JSON.stringify(backup.body)).toBe(200);
  return backup.body as { backupId: string; organizationId: string };
};

describe('the backup scheduler', () => {
  it('runs an organization\u2019s firings while another organization\u2019s run hangs, and that one\u2019s again once it ends', async () => {
    const other = (await t.call('organization.create', { name: 'Lanes B' })).body;
    const outsider = t.as((await t.call('user.createApiKey', { name: 'b', metadata: { organizationId: other.organizationId } })).body.key);
    const mine = await platformBackup(t.call);
    const theirs = await platformBackup(outsider);
    let release: () => void = () => {};
    const hanging = new Promise<void>((resolve) => (release = resolve));
    const runs: string[] = [];
    const scheduler = new BackupScheduler(t.db, () => now, async (row: { id: string }) => {
      runs.push(row.id);
      if (row.id === theirs.backupId) await hanging;
    }, pino({ level: 'silent' }));
    const ticked = (wait: boolean) => Promise.race([scheduler.tick(wait), new Promise<string[]>((_, reject) => setTimeout(() => reject(new Error('the tick waited for a hanging run')), 5_000))]);

    now = at(65);
    expect((await ticked(false)).sort()).toEqual([mine.backupId, theirs.backupId].sort());
    await waitFor(async () => runs.length === 2 || undefined, { what: 'both runs started' });
    // The next firing: B's run still hangs, A's backup runs; B's firing is not claimed meanwhile.
    now = at(125);
    expect(await ticked(true)).toEqual([mine.backupId]);
    release();
    await waitFor(async () => (await ticked(true)).includes(theirs.backupId) || undefined, { what: 'B’s backup running again' });
    expect(runs.filter((id) => id === theirs.backupId)).toHaveLength(2);
    await scheduler.stop();
  }, 30_000);
});
