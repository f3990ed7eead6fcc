// A removed stack's directory under the agent's data directory, on a real filesystem.
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeDataDir, exists, openDeployDirs, removeStackDir, stackDirOf, swapInCode } from './stack-dir.js';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-stack-dir-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** A stack as a deploy leaves it: its source swapped in, its state written, `files/` made. */
async function deployed(appName: string) {
  const dir = stackDirOf(dataDir, appName);
  await openDeployDirs(dir);
  await writeFile(join(dir.incoming, 'docker-compose.yml'), 'services: {}\n');
  await swapInCode(dir);
  await writeFile(dir.state, '{}');
  return dir;
}

describe('removeStackDir', () => {
  it('removes the whole directory when the volumes are kept but files/ holds nothing', async () => {
    const dir = await deployed('stack-empty-files');
    await removeStackDir(dir, { keepFiles: true });
    expect(await exists(dir.root)).toBe(false);
    expect(await readdir(composeDataDir(dataDir))).not.toContain('stack-empty-files');
  });

  it('keeps only files/ when it holds bind-mounted data and the volumes are kept', async () => {
    const dir = await deployed('stack-kept-files');
    await mkdir(join(dir.files, 'www'));
    await writeFile(join(dir.files, 'www', 'token'), 'kept\n');
    await removeStackDir(dir, { keepFiles: true });
    expect(await readdir(dir.root)).toEqual(['files']);
  });

  it('removes everything, files/ included, when the volumes go', async () => {
    const dir = await deployed('stack-all-gone');
    await writeFile(join(dir.files, 'data'), 'x');
    await removeStackDir(dir, { keepFiles: false });
    expect(await exists(dir.root)).toBe(false);
  });

  it('succeeds when the directory is gone already', async () => {
    await removeStackDir(stackDirOf(dataDir, 'stack-never-here'), { keepFiles: true });
    expect(await exists(join(composeDataDir(dataDir), 'stack-never-here'))).toBe(false);
  });
});
