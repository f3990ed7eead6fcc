import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INSTANCE_FILE, throwawayOwner } from './throwaway-owner.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-owner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('throwawayOwner', () => {
  it('stays the same for one data directory across starts', async () => {
    const dir = join(root, 'a');
    const first = await throwawayOwner(dir, 'local');
    expect(first).toMatch(/^local\/[0-9a-f]{16}$/);
    expect(await throwawayOwner(dir, 'local')).toBe(first);
    expect(readFileSync(join(dir, INSTANCE_FILE), 'utf8').trim()).toBe(first.slice('local/'.length));
  });

  it('differs between two agents of one server id with their own data directories', async () => {
    expect(await throwawayOwner(join(root, 'b'), 'local')).not.toBe(await throwawayOwner(join(root, 'c'), 'local'));
  });

  it('makes a new instance when the file is not one', async () => {
    const dir = join(root, 'd');
    await throwawayOwner(dir, 'local');
    writeFileSync(join(dir, INSTANCE_FILE), '../../x\n');
    expect(await throwawayOwner(dir, 'local')).toMatch(/^local\/[0-9a-f]{16}$/);
  });
});
