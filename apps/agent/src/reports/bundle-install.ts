/**
 * Puts the agent program the control plane offers (settings.updateServer) in place of this
 * agent's own program file: downloaded beside it, checked against the SHA-256 and size the
 * signed AgentRestart named, given the old file's mode, then renamed over it in one step (a
 * failure at any point leaves the old program as it was). The agent runs on it at its next
 * start.
 */
import { randomBytes } from 'node:crypto';
import { chmod, rename, rm, stat } from 'node:fs/promises';
import type { ArtifactClient } from './artifacts.js';

/** Longest download of the program. */
const BUNDLE_DOWNLOAD_MS = 50_000;

export async function installAgentBundle(
  artifacts: Pick<ArtifactClient, 'fetchAgentBundle'>,
  programPath: string,
  expected: { sha256: string; size: number },
): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(expected.sha256)) throw new Error('the program digest is not a SHA-256');
  const mode = (await stat(programPath)).mode & 0o777;
  const next = `${programPath}.next-${randomBytes(4).toString('hex')}`;
  try {
    const got = await artifacts.fetchAgentBundle(expected.sha256, next, {
      signal: new AbortController().signal,
      deadline: Date.now() + BUNDLE_DOWNLOAD_MS,
      maxBytes: expected.size,
    });
    if (got.sha256 !== expected.sha256 || got.size !== expected.size) {
      throw new Error(`the program received (${got.size} bytes, SHA-256 ${got.sha256}) is not the one announced`);
    }
    await chmod(next, mode);
    await rename(next, programPath);
  } finally {
    await rm(next, { force: true });
  }
}
