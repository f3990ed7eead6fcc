/**
 * Tests only: the end of an agent test file that creates Swarm services, a network, command
 * channels and directories. Each step goes on after a failure; what could not be removed
 * fails the file at the end, named.
 */
import { rm } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import type Dockerode from 'dockerode';
import { removeServerChannel } from './nats.js';
import { waitUntil } from './wait.js';

export class CleanUp {
  private readonly problems: string[] = [];

  constructor(private readonly docker: Dockerode) {}

  /** Removes each service (one already gone is fine). */
  async services(names: Iterable<string>): Promise<void> {
    for (const name of names) {
      await this.docker
        .getService(name)
        .remove()
        .catch((err: { statusCode?: number }) => {
          if (err.statusCode !== 404) this.problems.push(`service ${name}: ${String(err)}`);
        });
    }
  }

  /** Removes the network once its services' tasks have left it (up to a minute). */
  async network(name: string): Promise<void> {
    await waitUntil(
      `network ${name} removed`,
      async () => {
        try {
          await this.docker.getNetwork(name).remove();
          return true;
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 404) return true;
          throw err;
        }
      },
      60_000,
      250,
    ).catch((err: unknown) => this.problems.push(String(err)));
  }

  /** Runs `step`, noting its failure as `what`. */
  async step(what: string, step: () => Promise<unknown>): Promise<void> {
    await step().catch((err: unknown) => this.problems.push(`${what}: ${String(err)}`));
  }

  /** Removes each server's command channel, then closes the connection. */
  async channels(nc: NatsConnection | undefined, serverIds: Iterable<string>): Promise<void> {
    if (!nc) return;
    for (const id of serverIds) await this.step(`channel ${id}`, () => removeServerChannel(nc, id));
    await nc.close();
  }

  async dirs(dirs: Iterable<string>): Promise<void> {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }

  /** Fails when anything could not be removed, naming each. */
  done(): void {
    if (this.problems.length) throw new Error(`clean-up left objects behind:\n${this.problems.join('\n')}`);
  }
}
