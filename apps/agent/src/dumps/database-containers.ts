/**
 * The database's running container, and a tool run in it (docker exec, no TTY): a database
 * service's Swarm task, or a compose stack's service (Docker Compose's labels, or the Swarm
 * stack's `<project>_<service>`).
 */
import type { Duplex, Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import type { DatabaseTarget } from '@skiff/proto';
import { checkObjectName, engineCall } from '../docker/engine.js';
import { ExecFrames } from './exec-frames.js';
import { removeThrowaway, startThrowaway } from './throwaway-containers.js';
import { OWNER_LABEL, RELAY_LABEL } from './throwaway-leftovers.js';
import type { ToolCommand } from './tool-commands.js';
import { VOLUME_TOOL_IMAGE } from './volume-containers.js';

export interface ToolRun {
  /** The tool's standard output (stderr kept apart for the failure's reason). */
  output: Readable;
  /** The tool's standard input, when it was asked for; end it to close the tool's input. */
  input: Duplex | null;
  /** Settles when the tool exited: rejects naming its exit code and the end of its stderr. */
  exited(): Promise<void>;
  /** Closes the connection to the tool: its output and input close, so it ends. */
  cancel(): void;
}

/** The image a compose stack's service was deployed with: `ref` to run, `name` to say. */
export interface DeployedImage {
  ref: string;
  name: string;
}

export interface DatabaseContainers {
  /** The id of a running container of the target, or null when none runs. */
  running(target: DatabaseTarget): Promise<string | null>;
  /**
   * The image of a compose stack's service as deployed on this server: the exact image of
   * one of its containers (running or not), else the image its Swarm service names (which
   * may be absent from this server). Null when neither exists here. Reads only.
   */
  deployedImage(target: DatabaseTarget): Promise<DeployedImage | null>;
  run(containerId: string, command: ToolCommand, withInput: boolean): Promise<ToolRun>;
  /** The container's `NAME=value` environment (its secrets are scrubbed from failures: handlers/tool-reason.ts). */
  environment(containerId: string): Promise<string[]>;
  /**
   * Starts a throw-away relay container `name` (busybox, for its nc) in the network namespace
   * of running container `containerId`, replacing one a run left; answers its id. Tools run
   * in it reach what listens on the container's loopback (libsql-http.ts).
   */
  startRelay(name: string, containerId: string): Promise<string>;
  /** Removes a relay; nothing when it is gone already. */
  remove(idOrName: string): Promise<void>;
  /** The last lines the container logged (stdout and stderr) since `since` (ms since the epoch). */
  logTail(containerId: string, since: number): Promise<string>;
}

/** How many lines logTail reads at most. */
const LOG_TAIL_LINES = 50;

/** A log's text out of Docker's frames (8-byte headers, no TTY), or as it is (TTY). */
export function logText(raw: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= raw.length && raw[at]! <= 2 && raw.readUIntBE(at + 1, 3) === 0) {
    const size = raw.readUInt32BE(at + 4);
    parts.push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return at === 0 && raw.length > 0 ? raw.toString('utf8') : Buffer.concat(parts).toString('utf8');
}

/** A relay only pipes bytes. */
const RELAY_LIMITS = { Memory: 64 * 1024 ** 2, MemorySwap: 64 * 1024 ** 2, NanoCpus: 500_000_000, PidsLimit: 32 } as const;

/** Why a tool cannot run in the target: no container of it runs. */
export const notRunning = (target: DatabaseTarget) =>
  `no running container of ${target.workload!.appName}${target.serviceName ? ` service ${target.serviceName}` : ''}: start the database first`;

const POLL_MS = 100;

/** The label sets that find the target's containers, in order: Docker Compose's, then a Swarm stack's. */
function labelChoices(target: DatabaseTarget): string[][] {
  const appName = target.workload?.appName ?? '';
  return target.serviceName
    ? [
        [`com.docker.compose.project=${appName}`, `com.docker.compose.service=${target.serviceName}`],
        [`com.docker.swarm.service.name=${appName}_${target.serviceName}`],
      ]
    : [[`com.docker.swarm.service.name=${appName}`]];
}

export class DockerodeDatabaseContainers implements DatabaseContainers {
  /** `owner`: the agent's server id, on its relays (OWNER_LABEL) so that its start removes only its own leftovers. */
  constructor(
    private readonly docker: Dockerode,
    private readonly options: { owner?: string; relayImage?: string } = {},
  ) {}

  async startRelay(name: string, containerId: string): Promise<string> {
    checkObjectName('container', name, 'create container');
    await this.remove(name);
    return startThrowaway(this.docker, {
      name,
      Image: this.options.relayImage ?? VOLUME_TOOL_IMAGE,
      Cmd: ['sleep', '86400'],
      Labels: { [RELAY_LABEL]: name, [OWNER_LABEL]: this.options.owner ?? '' },
      HostConfig: { NetworkMode: `container:${containerId}`, ...RELAY_LIMITS },
    });
  }

  remove(idOrName: string): Promise<void> {
    return removeThrowaway(this.docker, idOrName, false);
  }

  async logTail(containerId: string, since: number): Promise<string> {
    const options = { stdout: true, stderr: true, follow: false as const, since: Math.floor(since / 1000), tail: LOG_TAIL_LINES };
    return logText(await engineCall('container logs', () => this.docker.getContainer(containerId).logs(options)));
  }

  async running(target: DatabaseTarget): Promise<string | null> {
    for (const label of labelChoices(target)) {
      const found = await engineCall('list containers', () => this.docker.listContainers({ filters: { label, status: ['running'] } }));
      if (found[0]) return found[0].Id;
    }
    return null;
  }

  async deployedImage(target: DatabaseTarget): Promise<DeployedImage | null> {
    for (const label of labelChoices(target)) {
      const found = await engineCall('list containers', () => this.docker.listContainers({ all: true, filters: { label } }));
      if (found[0]) {
        const container = await engineCall('inspect container', () => this.docker.getContainer(found[0]!.Id).inspect());
        return { ref: container.Image, name: container.Config.Image };
      }
    }
    if (!target.serviceName) return null;
    const name = `${target.workload?.appName ?? ''}_${target.serviceName}`;
    const services = await engineCall('list services', () => this.docker.listServices({ filters: { name: [name] } }));
    // The name filter matches prefixes.
    const task = services.find((s) => s.Spec?.Name === name)?.Spec?.TaskTemplate;
    const image = task && 'ContainerSpec' in task ? task.ContainerSpec?.Image : undefined;
    return image ? { ref: image, name: image } : null;
  }

  async environment(containerId: string): Promise<string[]> {
    const info = await engineCall('inspect container', () => this.docker.getContainer(containerId).inspect());
    return info.Config?.Env ?? [];
  }

  async run(containerId: string, command: ToolCommand, withInput: boolean): Promise<ToolRun> {
    const exec = await engineCall('exec create', () =>
      this.docker.getContainer(containerId).exec({ Cmd: command.argv, AttachStdout: true, AttachStderr: true, AttachStdin: withInput, Tty: false }),
    );
    const stream = (await engineCall('exec start', () => exec.start({ hijack: true, stdin: withInput }))) as Duplex;
    const frames = new ExecFrames();
    const ended = new Promise<void>((resolve, reject) => {
      frames.once('end', resolve);
      frames.once('close', resolve);
      stream.once('close', resolve);
      stream.once('error', reject);
    });
    stream.pipe(frames);
    const exited = async () => {
      await ended;
      for (;;) {
        const state = await engineCall('exec inspect', () => exec.inspect());
        if (!state.Running) {
          if (state.ExitCode === 0) return;
          throw new Error(`${command.tool} exited with ${state.ExitCode}${frames.stderrTail ? `: ${frames.stderrTail}` : ''}`);
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };
    return { output: frames, input: withInput ? stream : null, exited, cancel: () => stream.destroy() };
  }
}
