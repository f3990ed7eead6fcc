import { mkdtemp, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applicationFilesDir, FileMountError, fileBinds, writeFileMounts } from './file-mounts.js';

let dataDir: string;
let outside: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-file-mounts-'));
  outside = await mkdtemp(join(tmpdir(), 'skiff-file-mounts-outside-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const file = (path: string, content = 'x', target = '/etc/x') => ({ path, content, target });

describe('file mounts on the agent', () => {
  it('are written under the application\'s folder, anew at each deploy, and bound read-only', async () => {
    const dir = applicationFilesDir(dataDir, 'app_one');
    expect(dir).toBe(join(dataDir, 'applications', 'app_one', 'files'));
    await writeFileMounts(dir, [file('conf/app.env', 'A=1\n', '/etc/app.env'), file('old.txt')]);
    expect(await readFile(join(dir, 'conf', 'app.env'), 'utf8')).toBe('A=1\n');
    expect((await stat(join(dir, 'conf', 'app.env'))).mode & 0o777).toBe(0o644);
    await writeFileMounts(dir, [file('conf/app.env', 'A=2\n', '/etc/app.env')]);
    expect(await readdir(dir)).toEqual(['conf']);
    expect(await readFile(join(dir, 'conf', 'app.env'), 'utf8')).toBe('A=2\n');
    expect(fileBinds(dir, [file('conf/app.env', 'A=2\n', '/etc/app.env')])).toEqual([{ source: join(dir, 'conf', 'app.env'), target: '/etc/app.env', readOnly: true }]);
  });

  it('refuse paths that leave the folder and workload ids that are not a folder name', async () => {
    const dir = applicationFilesDir(dataDir, 'app_two');
    for (const path of ['../x', 'a/../../x', '/etc/passwd', 'a//b', './a', 'a\\b']) {
      await expect(writeFileMounts(dir, [file(path)]), path).rejects.toThrow(FileMountError);
      expect(() => fileBinds(dir, [file(path)]), path).toThrow(FileMountError);
    }
    expect(() => applicationFilesDir(dataDir, '../app')).toThrow(FileMountError);
    expect(await readdir(outside)).toEqual([]);
  });

  it('follow no link: a link in a directory\'s or the file\'s place is refused and nothing is written through it', async () => {
    const dir = applicationFilesDir(dataDir, 'app_three');
    // A link can only be there if something else put it: the folder is made anew, so plant it between writes.
    await mkdir(dir, { recursive: true });
    await symlink(outside, join(dir, 'conf'));
    await writeFileMounts(dir, [file('conf/a.txt')]);
    expect(await readdir(outside)).toEqual([]);

    // The files themselves: a path that is both a file and a directory is refused.
    await expect(writeFileMounts(dir, [file('a'), file('a/b')])).rejects.toThrow(FileMountError);
    await expect(writeFileMounts(dir, [file('a/b'), file('a')])).rejects.toThrow(FileMountError);
    await writeFile(join(outside, 'target.txt'), 'untouched');
    expect(await readFile(join(outside, 'target.txt'), 'utf8')).toBe('untouched');
  });
});
