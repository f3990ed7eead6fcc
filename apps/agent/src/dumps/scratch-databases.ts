/**
 * Throw-away database containers for verifications (VerifyDatabase): the database service's
 * image, without a network (loopback only), with a one-time root password, within
 * SCRATCH_LIMITS; removed with its
 * anonymous data volume when the verification ends. The image is never pulled: one that
 * is not on the server is refused (ImageAbsent). Before one starts, `missingTools` looks for
 * the engine's programs in a short-lived container of the image (a backup of another engine).
 */
import { randomBytes } from 'node:crypto';
import type Dockerode from 'dockerode';
import type { DatabaseEngine } from '@skiff/proto';
import { checkImageRef, checkObjectName, engineCall, isNotFound } from '../docker/engine.js';
import { removeThrowaway, startThrowaway } from './throwaway-containers.js';
import { OWNER_LABEL, SCRATCH_LABEL, scratchName } from './throwaway-leftovers.js';
import { scratchEnv } from './verify-tools.js';

export { SCRATCH_LABEL, scratchName };

const LOG_LINES = 5;

/** The image is not on this server (a verification never pulls one). */
export class ImageAbsent extends Error {
  constructor(readonly image: string) {
    super(`the image ${image} is not on this server`);
  }
}

/**
 * Labels by which Docker Compose, Swarm stacks and the agent find a workload's containers: an
 * image built by Compose carries some, and a container inherits its image's labels, so the
 * throw-away container blanks them and is never taken for one of the stack's.
 */
const WORKLOAD_LABEL = /^(com\.docker\.(compose|stack|swarm)\.|skiff\.)/;

const blankedWorkloadLabels = (labels: Record<string, string> | null | undefined) =>
  Object.fromEntries(Object.keys(labels ?? {}).filter((k) => WORKLOAD_LABEL.test(k)).map((k) => [k, '']));

/**
 * What a verification may take of its server: the image is the user's and the dump comes
 * from a bucket, so neither may starve the workloads beside it (memory, CPU, processes).
 */
export const SCRATCH_LIMITS = { Memory: 1024 ** 3, MemorySwap: 1024 ** 3, NanoCpus: 1_000_000_000, PidsLimit: 512 } as const;

/** A non-TTY container's log: frames of an 8-byte header and their text (exec-frames.ts). */
function withoutFrameHeaders(raw: Buffer): string {
  let text = '';
  for (let at = 0; at + 8 <= raw.length; ) {
    const length = raw.readUInt32BE(at + 4);
    text += raw.subarray(at + 8, at + 8 + length).toString('utf8');
    at += 8 + length;
  }
  return text;
}

/** Prints each of its arguments that is not a program on the image's PATH (POSIX sh: `command -v`). */
const TOOL_PROBE = 'for tool do command -v "$tool" >/dev/null 2>&1 || echo "$tool"; done';
/** How long the image's `sh` may take to answer the probe: the image is the user's, and a verification never waits on it forever. */
const PROBE_TIMEOUT_MS = 60_000;
/** What the engine answers when an image has no `sh` to run the probe with. */
const NO_SHELL = /executable file not found|no such file or directory/i;

export interface ScratchDatabases {
  /**
   * Which of `tools` `image` lacks, looked up by the image's `sh` in a short-lived container
   * `name` (no network, its entrypoint replaced, removed at once); all of them, and `sh`, when
   * it has no shell. Throws ImageAbsent when the server lacks `image`.
   */
  missingTools(name: string, image: string, tools: string[]): Promise<string[]>;
  /** Starts a container `name` of `image` whose server creates `database`; answers its id. Throws ImageAbsent when the server lacks `image`. */
  start(name: string, image: string, engine: DatabaseEngine, database: string): Promise<string>;
  /** Whether the container still runs (its server may have exited on a bad configuration). */
  running(idOrName: string): Promise<boolean>;
  /** The last lines the container's server wrote, for a failure's reason. */
  logTail(idOrName: string): Promise<string>;
  /** Removes the container and its anonymous volumes; nothing when it is gone already. */
  remove(idOrName: string): Promise<void>;
}

export class DockerodeScratchDatabases implements ScratchDatabases {
  /** `owner`: the agent's server id, on its containers (OWNER_LABEL) so that its start removes only its own leftovers. */
  constructor(
    private readonly docker: Dockerode,
    private readonly options: { owner?: string; probeTimeoutMs?: number } = {},
  ) {}

  async missingTools(name: string, image: string, tools: string[]): Promise<string[]> {
    const labels = await this.labelsFor(name, image);
    await this.remove(name);
    const container = await engineCall('create container', () =>
      this.docker.createContainer({
        name,
        Image: image,
        Entrypoint: ['sh'],
        Cmd: ['-c', TOOL_PROBE, 'sh', ...tools],
        Labels: labels,
        HostConfig: { NetworkMode: 'none', ...SCRATCH_LIMITS },
      }),
    );
    try {
      try {
        await engineCall('start container', () => container.start());
      } catch (err) {
        if (NO_SHELL.test((err as Error).message)) return ['sh', ...tools];
        throw err;
      }
      const ms = this.options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the image's sh did not look for ${tools.join(', ')} within ${ms / 1000} s`)), ms);
      });
      // The wait left behind ends with the container's removal below.
      const { StatusCode } = (await Promise.race([engineCall('wait container', () => container.wait()), late]).finally(() => clearTimeout(timer))) as { StatusCode: number };
      if (StatusCode !== 0) throw new Error(`the image's sh could not look for ${tools.join(', ')} (it exited with ${StatusCode})`);
      const raw = await engineCall('container logs', () => container.logs({ stdout: true, stderr: false }));
      const printed = new Set(withoutFrameHeaders(Buffer.from(raw)).split('\n'));
      return tools.filter((t) => printed.has(t));
    } finally {
      await this.remove(container.id);
    }
  }

  async start(name: string, image: string, engine: DatabaseEngine, database: string): Promise<string> {
    const env = scratchEnv(engine, database, randomBytes(24).toString('hex'));
    if (!env) throw new Error('this engine cannot be verified here');
    const labels = await this.labelsFor(name, image);
    return startThrowaway(this.docker, {
      name,
      Image: image,
      Env: env,
      Labels: labels,
      // Loopback only. (NetworkDisabled would also drop the hostname the MariaDB image needs.)
      HostConfig: { NetworkMode: 'none', ...SCRATCH_LIMITS },
    });
  }

  /** The labels of a container `name` of `image` (checked, and present here: else ImageAbsent). */
  private async labelsFor(name: string, image: string): Promise<Record<string, string>> {
    checkObjectName('container', name, 'create container');
    checkImageRef(image, 'create container');
    const inspected = await engineCall('inspect image', () => this.docker.getImage(image).inspect()).catch((err: unknown) => {
      throw isNotFound(err) ? new ImageAbsent(image) : err;
    });
    return { ...blankedWorkloadLabels(inspected.Config?.Labels), [SCRATCH_LABEL]: name, [OWNER_LABEL]: this.options.owner ?? '' };
  }

  async running(idOrName: string): Promise<boolean> {
    try {
      const state = await engineCall('inspect container', () => this.docker.getContainer(idOrName).inspect());
      return state.State.Running;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async logTail(idOrName: string): Promise<string> {
    const raw = await engineCall('container logs', () => this.docker.getContainer(idOrName).logs({ stdout: true, stderr: true, tail: LOG_LINES })).catch(() => Buffer.alloc(0));
    return withoutFrameHeaders(Buffer.from(raw)).trim();
  }

  remove(idOrName: string): Promise<void> {
    return removeThrowaway(this.docker, idOrName, true);
  }
}
