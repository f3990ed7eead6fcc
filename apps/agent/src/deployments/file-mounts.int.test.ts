import { mkdtemp, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applicationFilesDir, FileMountError, fileBinds, writeFileInto, writeFileMounts } from './file-mounts.js';

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

  it('writeFileInto (a compose stack\'s folder, not made anew) writes through no link planted there, and refuses a name over 255 bytes', async () => {
    const dir = join(dataDir, 'compose', 'stack_one');
    await mkdir(dir, { recursive: true });
    // A workload with its folder bind-mounted could leave links where the next deploy writes.
    await symlink(outside, join(dir, 'conf'));
    await writeFile(join(outside, 'victim.txt'), 'untouched');
    await symlink(join(outside, 'victim.txt'), join(dir, 'app.conf'));
    await expect(writeFileInto(dir, { path: 'conf/a.txt', content: 'x' })).rejects.toThrow(FileMountError);
    await expect(writeFileInto(dir, { path: 'app.conf', content: 'x' })).rejects.toThrow(FileMountError);
    expect((await readdir(outside)).filter((f) => f !== 'target.txt')).toEqual(['victim.txt']);
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('untouched');

    for (const path of [`${'a'.repeat(256)}`, `conf2/${'é'.repeat(128)}`, `${'b'.repeat(300)}/x.conf`]) {
      const refused = await writeFileInto(dir, { path, content: 'x' }).then(() => null, (err: unknown) => err);
      expect(refused, path.slice(0, 20)).toBeInstanceOf(FileMountError);
      expect((refused as Error).message.length).toBeLessThan(400);
    }
    expect((await readdir(dir)).sort()).toEqual(['app.conf', 'conf']);
    await writeFileInto(dir, { path: `conf2/${'a'.repeat(255)}`, content: 'ok' });
    expect(await readFile(join(dir, 'conf2', 'a'.repeat(255)), 'utf8')).toBe('ok');
  });
});
