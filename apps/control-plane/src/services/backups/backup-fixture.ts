// The set-up the backup int tests share: an S3-compatible server with one bucket, a platform
// whose logs are watched for the destination's secret key, one project's environment, and
// the calls that answer 200 or BAD_REQUEST naming one field.
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { startS3 } from '../../testing/s3-server.js';

export type BackupFixtureS3 = Awaited<ReturnType<typeof startS3>>;

export interface BackupFixture {
  t: TestPlatform;
  s3: BackupFixtureS3;
  /** The environment of the project the fixture created. */
  env: string;
}

/**
 * Starts S3 and the platform before the file's tests and closes them after; `ready` is
 * filled in before any test runs (copy its fields in a beforeAll of the file).
 */
export function backupFixture(options: { bucket: string; secret: string; project: string; platform?: Parameters<typeof startTestPlatform>[0] }) {
  const ready = {} as BackupFixture;
  beforeAll(async () => {
    ready.s3 = await startS3([options.bucket]);
    ready.t = await startTestPlatform(options.platform);
    ready.t.watch.secret(options.secret);
    ready.env = (await ready.t.call('project.create', { name: options.project })).body.environments[0].environmentId;
  });
  afterAll(async () => {
    await ready.t?.close();
    await ready.s3?.close();
  });

  const ok = async (op: string, input: Record<string, unknown>) => {
    const r = await ready.t.call(op, input);
    expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  /** BAD_REQUEST naming `field` alone, its message matching `message` when given. */
  const bad = async (op: string, input: Record<string, unknown>, field: string, message?: RegExp) => {
    const r = await ready.t.call(op, input);
    expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
    expect(r.body.issues.map((i: { path: unknown[] }) => i.path[0])).toEqual([field]);
    if (message) expect(r.body.issues[0].message).toMatch(message);
    return r.body;
  };
  const commandCount = async () => (await ready.t.db.selectFrom('commands').select('id').execute()).length;
  return { ready, ok, bad, commandCount };
}
