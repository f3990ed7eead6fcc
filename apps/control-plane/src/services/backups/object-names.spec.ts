import { describe, expect, it } from 'vitest';
import { isFileIn, objectKey, ownPrefix, retentionVictims, runStampOf, stampOf } from './object-names.js';

describe('backup object names', () => {
  it('puts each run under the prefix and the backup name, stamped so keys sort by time', () => {
    const at = new Date('2026-12-05T17:01:02.003Z');
    expect(objectKey('nightly/eu/', 'shop-db', at, 'sql.gz')).toBe('nightly/eu/shop-db/2026-12-05T17-01-02-003Z.sql.gz');
    expect(objectKey('', 'bkp_1', at, 'dump.gz')).toBe('bkp_1/2026-12-05T17-01-02-003Z.dump.gz');
    expect(stampOf(new Date('2026-01-01T00:00:00Z')) < stampOf(new Date('2026-01-01T00:00:00.001Z'))).toBe(true);
  });

  it('reads the run stamp only of keys a run wrote directly in its own folder', () => {
    const own = ownPrefix('n/', 'db');
    expect(runStampOf('n/db/2026-12-05T17-01-02-003Z.sql.gz', own)).toBe('2026-12-05T17-01-02-003Z');
    expect(runStampOf('n/db/2026-12-05T17-01-02-003Z', own)).toBeNull();
    expect(runStampOf('n/db/notes.txt', own)).toBeNull();
    expect(runStampOf('n/db/sub/2026-12-05T17-01-02-003Z.sql.gz', own)).toBeNull();
    expect(runStampOf('n/db2/2026-12-05T17-01-02-003Z.sql.gz', own)).toBeNull();
    expect(runStampOf('n/2026-12-05T17-01-02-003Z.sql.gz', own)).toBeNull();
  });

  it('keeps the newest runs (with their sibling files) and never names another object', () => {
    const own = 'n/db/';
    const run = (minute: number, ext = 'sql.gz') => `${own}2026-12-05T17-0${minute}-00-000Z.${ext}`;
    const keys = [run(1), run(1, 'secret.key.gz'), run(2), run(3), run(4), run(4, 'secret.key.gz'), 'n/db/readme.txt', 'n/dbx/2026-12-05T17-00-00-000Z.sql.gz', 'other'];
    expect(retentionVictims(keys, own, 2).sort()).toEqual([run(1), run(1, 'secret.key.gz'), run(2)].sort());
    expect(retentionVictims(keys, own, 10)).toEqual([]);
  });

  it('takes as a backup\u2019s file only a key directly in its folder that a bucket can hold', () => {
    const own = 'n/db/';
    expect(isFileIn('n/db/2026-12-05T17-01-02-003Z.sql.gz', own)).toBe(true);
    for (const key of ['n/db/', 'n/db/../x', 'n/db/sub/x', '/n/db/x', 'n/dbx/x', 'n/db/x\u0000y', 'n/db/x\ny', `n/db/${'x'.repeat(1020)}`, `n/db/${'é'.repeat(510)}`]) {
      expect(isFileIn(key, own), JSON.stringify(key).slice(0, 40)).toBe(false);
    }
    expect(isFileIn(`n/db/${'x'.repeat(1019)}`, own)).toBe(true);
  });
});
