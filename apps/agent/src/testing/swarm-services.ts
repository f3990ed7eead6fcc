/**
 * Tests only: Swarm services of busybox on the real engine for the workload command tests,
 * commands that name them, and a context to run a handler with. Every service gets a name
 * unique to the test file and is removed by `cleanUp`, which fails the file when something
 * could not be removed.
 */
import { randomBytes } from 'node:crypto';
import { swarmServiceSpec, type ServiceMode } from '@skiff/domain';
import { CommandKind, WorkloadKind, timestampFromDate, timestampToDate, type Command } from '@skiff/proto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import type { CommandContext } from '../pipeline/handler.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import type { ServiceSpec } from '../docker/driver.js';
import { waitUntil } from './wait.js';

const SECOND = 1_000_000_000;
export const LOOP = "sh -c 'while true; do sleep 1; done'";

export type WorkloadCase = 'stopWorkload' | 'startWorkload' | 'reloadWorkload' | 'removeWorkload';

const KINDS: Record<WorkloadCase, CommandKind> = {
  stopWorkload: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
  startWorkload: CommandKind.COMMAND_KIND_START_WORKLOAD,
  reloadWorkload: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
  removeWorkload: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
};

export class TestServices {
  readonly run = randomBytes(3).toString('hex');
  readonly docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
  readonly driver = new DockerodeDriver({ docker: this.docker });
  readonly log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  private readonly names = new Set<string>();
  private counter = 0;

  constructor(private readonly prefix: string) {}

  /** A unique service name, removed at clean-up whatever creates it. */
  name(): string {
    const name = `${this.prefix}-${this.run}-${++this.counter}`;
    this.names.add(name);
    return name;
  }

  /** Creates a Skiff application service (skiff.id = its name unless given) and waits until its tasks run. */
  async create(
    options: {
      replicas?: number;
      mode?: ServiceMode;
      command?: string;
      id?: string;
      wait?: boolean;
      /** Changes the built spec before it is written. */
      tweak?: (spec: ServiceSpec) => ServiceSpec;
    } = {},
  ) {
    const name = this.name();
    const id = options.id ?? name;
    const built: ServiceSpec = swarmServiceSpec({
      appName: name,
      kind: 'application',
      id,
      image: 'busybox:latest',
      env: [],
      command: options.command ?? LOOP,
      args: null,
      replicas: options.replicas ?? 1,
      memoryLimit: null,
      memoryReservation: null,
      cpuLimit: null,
      cpuReservation: null,
      platformNetwork: 'unused',
      detachPlatformNetwork: true,
      modeCluster: options.mode ?? null,
      // Quick rolling updates in tests.
      updateConfigCluster: { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback', Monitor: SECOND },
      stopGracePeriodCluster: SECOND,
    });
    await this.driver.createOrUpdateService(options.tweak ? options.tweak(built) : built);
    if (options.wait !== false) {
      const wanted = options.mode && 'Global' in options.mode ? 1 : (options.replicas ?? 1);
      await waitUntil(`${name} running`, async () => (await this.running(name)).length === wanted, 60_000, 200);
    }
    return { name, id };
  }

  /** The service's tasks that run now. */
  async running(name: string) {
    return (await this.driver.serviceTasks(name)).filter((t) => t.state === 'running' && t.desiredState === 'running');
  }

  /** The engine's spec of the service, or null. */
  async spec(name: string): Promise<ServiceSpec | null> {
    try {
      return ((await this.docker.getService(name).inspect()) as { Spec: ServiceSpec }).Spec;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      throw err;
    }
  }

  command(
    payload: WorkloadCase,
    workload: { name: string; id: string },
    options: { serverId?: string; commandId?: string; deadline?: Date; kind?: WorkloadKind } = {},
  ): Command {
    const ref = { kind: options.kind ?? WorkloadKind.WORKLOAD_KIND_APPLICATION, id: workload.id, appName: workload.name };
    const value = payload === 'removeWorkload' ? { workload: ref, removeVolumes: false } : { workload: ref };
    return {
      commandId: options.commandId ?? `cmd-${this.run}-${++this.counter}`,
      serverId: options.serverId ?? 'local',
      kind: KINDS[payload],
      workloadKey: `application:${workload.id}`,
      deadline: timestampFromDate(options.deadline ?? new Date(Date.now() + 120_000)),
      createdAt: timestampFromDate(new Date()),
      payload: { $case: payload, value } as Command['payload'],
    };
  }

  /** A context to call a handler's `run` with, as the runner would. */
  context(command: Command, options: { signal?: AbortSignal; resumed?: boolean } = {}): CommandContext {
    return {
      command,
      signal: options.signal ?? new AbortController().signal,
      deadline: command.deadline ? timestampToDate(command.deadline) : null,
      resumed: options.resumed ?? false,
      log: this.log,
    };
  }

  /** Removes every service this file named; throws listing what could not be removed. */
  async cleanUp(): Promise<void> {
    const problems: string[] = [];
    for (const name of this.names) {
      await this.docker
        .getService(name)
        .remove()
        .catch((err: { statusCode?: number }) => {
          if (err.statusCode !== 404) problems.push(`service ${name}: ${String(err)}`);
        });
    }
    if (problems.length) throw new Error(`clean-up left objects behind:\n${problems.join('\n')}`);
  }
}
