/**
 * The last lines of a Skiff container's output (stdout and stderr, oldest first), for a
 * crash loop's report. The engine multiplexes both streams of a container without a TTY in
 * frames (8-byte header: stream, 3 zero bytes, big-endian length); a TTY's is raw.
 */
import type Dockerode from 'dockerode';
import { engineCall, isManaged, isNotFound } from './engine.js';
import { DockerConflictError } from './errors.js';

/** Longest line kept (the rest is cut): a crash report carries a few lines, not megabytes. */
const MAX_LINE = 2_000;

export async function containerLogTail(docker: Dockerode, containerId: string, lines: number): Promise<string[]> {
  const operation = `containerLogTail ${containerId.slice(0, 12)}`;
  const container = docker.getContainer(containerId);
  let info: { Config?: { Labels?: Record<string, string> | null; Tty?: boolean } };
  try {
    info = (await engineCall(operation, () => container.inspect({}))) as typeof info;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  if (!isManaged(info.Config?.Labels ?? undefined)) throw new DockerConflictError(operation, 'the container is not managed by Skiff');
  const raw = (await engineCall(operation, () =>
    container.logs({ stdout: true, stderr: true, follow: false, tail: lines }),
  )) as unknown as Buffer;
  const text = info.Config?.Tty ? raw.toString('utf8') : demultiplex(raw);
  return text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l !== '')
    .slice(-lines)
    .map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)} …` : l));
}

/** The payload of the engine's stream frames, in order. */
export function demultiplex(raw: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= raw.length) {
    const size = raw.readUInt32BE(offset + 4);
    parts.push(raw.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}
