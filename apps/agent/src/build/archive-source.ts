/**
 * An uploaded archive as a build's source (`drop` applications): downloaded from the control
 * plane (AgentArtifacts.FetchArchive, with the agent's credential) into the build's private
 * directory, checked against the size and SHA-256 the command carries, then extracted into
 * the source directory under the archive rules (archive-extract.ts), a single top-level
 * folder flattened. The downloaded file is removed afterwards, whatever happened.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveEntryError, type ArchiveFormat } from '@skiff/domain';
import type { ArchiveSource } from '@skiff/proto';
import { AbandonedError } from '../abort/abandoned.js';
import { ArtifactAborted, ArtifactError } from '../reports/artifacts.js';
import { ArchiveUnreadable, ExtractionStopped, extractArchive } from './archive-extract.js';
import { BuildError } from './errors.js';
import type { SourceContext } from './source.js';

const FORMATS: readonly string[] = ['zip', 'tar.gz'] satisfies ArchiveFormat[];

/** Fetches `archive` into the empty directory `dir`. Throws BuildError, or AbandonedError on abort. */
export async function fetchArchiveSource(archive: ArchiveSource, dir: string, ctx: SourceContext): Promise<void> {
  if (!ctx.artifacts) throw new BuildError('this agent cannot download archives from the control plane');
  if (!FORMATS.includes(archive.format)) throw new BuildError(`the archive format ${JSON.stringify(archive.format)} is neither zip nor tar.gz`);
  if (!/^[0-9a-f]{64}$/.test(archive.sha256)) throw new BuildError('the command carries no valid SHA-256 of the archive');
  const size = Number(archive.size);
  if (!Number.isSafeInteger(size) || size <= 0) throw new BuildError('the command carries no valid size of the archive');
  const format = archive.format as ArchiveFormat;

  const scratch = ctx.privateDir ?? (await mkdtemp(join(tmpdir(), 'skiff-archive-')));
  const file = join(scratch, `archive-${archive.archiveId.replace(/[^A-Za-z0-9_-]/g, '_')}`);
  try {
    await ctx.log(`Downloading archive ${archive.archiveId} (${format}, ${size} bytes)`);
    let got;
    try {
      got = await ctx.artifacts.fetchArchive(archive.archiveId, file, { signal: ctx.signal, deadline: ctx.deadline, maxBytes: size });
    } catch (err) {
      if (err instanceof ArtifactAborted || ctx.signal.aborted) throw new AbandonedError();
      if (err instanceof ArtifactError) throw new BuildError(err.message);
      throw err;
    }
    if (got.size !== size || got.sha256 !== archive.sha256) {
      throw new BuildError(`the downloaded archive differs from the upload (${got.size} bytes, sha256 ${got.sha256})`);
    }
    await ctx.log(`Archive verified (sha256 ${got.sha256})`);
    let extracted;
    try {
      extracted = await extractArchive(file, format, dir, { signal: ctx.signal, deadline: ctx.deadline });
    } catch (err) {
      if (err instanceof ExtractionStopped) {
        if (err.aborted || ctx.signal.aborted) throw new AbandonedError();
        throw new BuildError(err.message);
      }
      if (err instanceof ArchiveEntryError) throw new BuildError(`the archive was refused: entry ${JSON.stringify(err.entry)}: ${err.reason}`);
      if (err instanceof ArchiveUnreadable) throw new BuildError(`the archive was refused: ${err.message}`);
      throw err;
    }
    await ctx.log(
      `Extracted ${extracted.files} files and ${extracted.directories} folders (${extracted.bytes} bytes)` +
        (extracted.flattened ? `; the top-level folder ${extracted.flattened}/ is the source's root` : ''),
    );
  } finally {
    await rm(file, { force: true });
    if (!ctx.privateDir) await rm(scratch, { recursive: true, force: true });
  }
}
