import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `age -d` of the file with `passphrase` typed on its terminal (script(1) gives it one): its output, or its error. */
export async function ageDecrypt(file: Buffer, passphrase: string): Promise<{ ok: boolean; out: Buffer; err: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-age-'));
  try {
    await writeFile(join(dir, 'in.age'), file);
    const result = await new Promise<{ ok: boolean; err: string }>((resolve) => {
      const child = execFile('script', ['-qec', `age -d -o ${join(dir, 'out')} ${join(dir, 'in.age')}`, '/dev/null'], (err, stdout) => resolve({ ok: !err, err: stdout }));
      child.stdin!.end(`${passphrase}\n`);
    });
    return { ...result, out: result.ok ? await readFile(join(dir, 'out')) : Buffer.alloc(0) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
