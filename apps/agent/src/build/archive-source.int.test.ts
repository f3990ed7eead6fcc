import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { ArchiveEntryError, type ArchiveFormat } from '@skiff/domain';
import { AgentArtifactsService, type AgentArtifactsServer } from '@skiff/proto';
import { type TestEntry, tarGz, zipArchive } from '@skiff/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AbandonedError } from '../abort/abandoned.js';
import { ArtifactClient } from '../reports/artifacts.js';
import { extractArchive } from './archive-extract.js';
import { fetchArchiveSource } from './archive-source.js';
import { BuildError } from './errors.js';
import type { SourceContext } from './source.js';

let root: string;
let work: string;
let dest: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'skiff-archive-test-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => {
  work = mkdtempSync(join(root, 'w-'));
  // Created empty, as the build's work directory does.
  dest = join(work, 'source');
  mkdirSync(dest);
});

const build = (format: ArchiveFormat, entries: TestEntry[]) => (format === 'zip' ? zipArchive(entries) : tarGz(entries));

async function extract(format: ArchiveFormat, entries: TestEntry[]) {
  const file = join(work, `a.${format}`);
  writeFileSync(file, await build(format, entries));
  return extractArchive(file, format, dest, { signal: new AbortController().signal, deadline: Date.now() + 30_000 });
}

async function refusal(format: ArchiveFormat, entries: TestEntry[]): Promise<[string, string]> {
  try {
    await extract(format, entries);
  } catch (err) {
    if (err instanceof ArchiveEntryError) return [err.entry, err.reason];
    throw err;
  }
  throw new Error('expected the archive to be refused');
}

const tree = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1) + (d.isDirectory() ? '/' : ''))
    .sort();

describe.each(['tar.gz', 'zip'] as const)('extracting a %s', (format) => {
  it('flattens a single top-level folder and creates files with safe modes', async () => {
    const result = await extract(format, [
      { name: 'site/', type: 'directory' },
      { name: 'site/index.html', content: '<h1>hello</h1>' },
      { name: 'site/css/a.css', content: 'body{}' },
      { name: 'site/run.sh', content: '#!/bin/sh\n', mode: 0o4755 },
      { name: 'site/site/inner.txt', content: 'same name as the folder' },
    ]);
    expect(result.flattened).toBe('site');
    expect(tree(dest)).toEqual(['css/', 'css/a.css', 'index.html', 'run.sh', 'site/', 'site/inner.txt']);
    expect(readFileSync(join(dest, 'index.html'), 'utf8')).toBe('<h1>hello</h1>');
    expect(statSync(join(dest, 'run.sh')).mode & 0o7777).toBe(0o755);
    expect(statSync(join(dest, 'index.html')).mode & 0o7777).toBe(0o644);
    expect(result.files).toBe(4);
  });

  it('keeps archives with several top-level names as they are', async () => {
    const result = await extract(format, [
      { name: './Containerfile', content: 'FROM busybox:latest\n' },
      { name: './www/index.html', content: 'page' },
    ]);
    expect(result.flattened).toBe('');
    expect(tree(dest)).toEqual(['Containerfile', 'www/', 'www/index.html']);
  });

  it.each([
    [{ name: '../evil.txt', content: 'x' }, '`..` segments'],
    [{ name: 'ok/../../evil.txt', content: 'x' }, '`..` segments'],
    [{ name: '/tmp/evil-abs.txt', content: 'x' }, 'absolute paths'],
    [{ name: 'link', type: 'symlink', linkname: '/etc/passwd' }, 'links are not allowed'],
    [{ name: 'dev', type: 'device' }, 'device entries'],
  ] as [TestEntry, string][])('refuses %j', async (evil, why) => {
    const [entry, reason] = await refusal(format, [{ name: 'a.txt', content: 'fine' }, evil]);
    expect(entry).toBe(evil.name);
    expect(reason).toContain(why);
    expect(existsSync(join(work, 'evil.txt'))).toBe(false);
    expect(existsSync('/tmp/evil-abs.txt')).toBe(false);
  });
});

describe('archive-specific refusals', () => {
  it('refuses tar hard links', async () => {
    const [entry, reason] = await refusal('tar.gz', [
      { name: 'a.txt', content: 'x' },
      { name: 'b.txt', type: 'hardlink', linkname: 'a.txt' },
    ]);
    expect([entry, reason]).toEqual(['b.txt', 'links are not allowed']);
  });

  it('refuses a zip bomb by its compression ratio', async () => {
    const [entry, reason] = await refusal('zip', [{ name: 'zeros.bin', content: Buffer.alloc(8 * 1024 * 1024) }]);
    expect(entry).toBe('zeros.bin');
    expect(reason).toContain('zip bomb');
  });

  it('refuses a zip entry holding more than it declares', async () => {
    const [entry, reason] = await refusal('zip', [{ name: 'liar.txt', content: 'x'.repeat(5000), declaredSize: 10 }]);
    expect(entry).toBe('liar.txt');
    expect(reason).toMatch(/more than the 10 bytes|cannot be read/);
  });

  it('refuses what is not an archive of its format', async () => {
    const file = join(work, 'junk');
    writeFileSync(file, Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), randomBytes(200)]));
    await expect(extractArchive(file, 'tar.gz', dest, { signal: new AbortController().signal, deadline: Date.now() + 10_000 })).rejects.toThrow(/not a readable tar.gz/);
    await expect(extractArchive(file, 'zip', dest, { signal: new AbortController().signal, deadline: Date.now() + 10_000 })).rejects.toThrow(/not a readable zip/);
  });
});

describe('fetchArchiveSource (over gRPC)', () => {
  const files = new Map<string, Buffer>();
  let server: Server;
  let client: ArtifactClient;
  const credential = `cred-${randomBytes(16).toString('hex')}`;

  beforeAll(async () => {
    server = new Server();
    const impl: AgentArtifactsServer = {
      fetchArchive: (call) => {
        if (call.metadata.get('authorization')[0] !== `Bearer ${credential}`) {
          call.emit('error', { code: status.UNAUTHENTICATED, details: 'unknown server credential' });
          return;
        }
        const data = files.get(call.request.archiveId);
        if (!data) {
          call.emit('error', { code: status.NOT_FOUND, details: 'no such archive' });
          return;
        }
        for (let at = 0; at < data.length; at += 1000) call.write({ data: data.subarray(at, at + 1000) });
        call.end();
      },
      fetchAgentBundle: (call) => call.emit('error', { code: status.UNIMPLEMENTED, details: 'not served here' }),
    };
    server.addService(AgentArtifactsService, impl);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    client = new ArtifactClient({ target: `127.0.0.1:${port}`, credential, attempts: 1 });
  });
  afterAll(async () => {
    client?.close();
    server?.forceShutdown();
  });

  const context = (signal = new AbortController().signal): SourceContext & { lines: string[] } => {
    const lines: string[] = [];
    return { signal, deadline: Date.now() + 30_000, log: async (...l) => void lines.push(...l), deploymentId: 'dep_test', privateDir: work, artifacts: client, lines };
  };
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  it('downloads, verifies and extracts the archive, then removes the download', async () => {
    const data = await tarGz([{ name: 'app/Containerfile', content: 'FROM busybox:latest\n' }, { name: 'app/index.html', content: 'hi' }]);
    files.set('arc_ok', data);
    const ctx = context();
    await fetchArchiveSource({ archiveId: 'arc_ok', format: 'tar.gz', size: String(data.length), sha256: sha(data) }, dest, ctx);
    expect(tree(dest)).toEqual(['Containerfile', 'index.html']);
    expect(ctx.lines.join('\n')).toContain('top-level folder app/');
    expect(readdirSync(work).filter((n) => n.startsWith('archive-'))).toEqual([]);
  });

  it('refuses a download whose SHA-256 differs from the upload', async () => {
    const data = await zipArchive([{ name: 'index.html', content: 'hi' }]);
    files.set('arc_sha', data);
    const wrong = { archiveId: 'arc_sha', format: 'zip', size: String(data.length), sha256: sha(Buffer.from('other')) };
    await expect(fetchArchiveSource(wrong, dest, context())).rejects.toThrow(BuildError);
    await expect(fetchArchiveSource(wrong, dest, context())).rejects.toThrow(/differs from the upload/);
    expect(readdirSync(dest)).toEqual([]);
  });

  it('refuses a download larger than announced', async () => {
    const data = await zipArchive([{ name: 'index.html', content: 'hi' }]);
    files.set('arc_big', data);
    await expect(
      fetchArchiveSource({ archiveId: 'arc_big', format: 'zip', size: String(data.length - 1), sha256: sha(data) }, dest, context()),
    ).rejects.toThrow(/larger than/);
  });

  it('fails clearly for an archive the control plane does not have, and refuses evil content', async () => {
    await expect(fetchArchiveSource({ archiveId: 'arc_none', format: 'zip', size: '10', sha256: 'a'.repeat(64) }, dest, context())).rejects.toThrow(
      /no archive arc_none/,
    );
    const evil = await tarGz([{ name: '../escape.txt', content: 'x' }]);
    files.set('arc_evil', evil);
    await expect(
      fetchArchiveSource({ archiveId: 'arc_evil', format: 'tar.gz', size: String(evil.length), sha256: sha(evil) }, dest, context()),
    ).rejects.toThrow('the archive was refused: entry "../escape.txt": `..` segments are not allowed');
  });

  it('stops at once when the command is abandoned', async () => {
    const data = await tarGz([{ name: 'a.txt', content: 'x' }]);
    files.set('arc_abort', data);
    const abort = new AbortController();
    abort.abort();
    await expect(
      fetchArchiveSource({ archiveId: 'arc_abort', format: 'tar.gz', size: String(data.length), sha256: sha(data) }, dest, context(abort.signal)),
    ).rejects.toThrow(AbandonedError);
  });
});
