/**
 * ProxyManager: the agent's one `skiff-proxy` (Caddy) and the way configs reach it.
 *
 * - `ensure`: the container runs, created from proxy-container.ts when missing (a plain
 *   container, restart policy unless-stopped) or recreated when it was made from another
 *   spec; it boots from the last good config on disk.
 * - `apply(config)`: the whole config goes to Caddy's `/load`, which applies it atomically
 *   or refuses it whole (the running config stays). Accepted: kept as the last good config.
 *   Caddy unreachable: the container is ensured and the load tried once more, within the
 *   deadline. The container is never restarted to apply a change.
 * - keep-alive: between `start()` and `stop()`, the container is looked at every
 *   `watchIntervalMs` and brought back (started, or recreated with the last good config)
 *   when it stopped or is gone.
 *
 * Ensures, loads and keep-alive checks run one at a time, so a recreated container never
 * boots from a config older than one a load already answered for.
 * `stop()` leaves the container running: the sites keep answering while the agent restarts.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PLATFORM_NETWORK } from '@skiff/domain';
import type { Logger } from 'pino';
import type { ContainerInfo, DockerDriver } from '../docker/driver.js';
import { withoutEngineIds } from '../docker/errors.js';
import { AdminUnreachableError, adminRequest, caddyReason } from './admin-client.js';
import { readConfigFile, writeConfigFile, type CaddyConfig } from './last-good.js';
import {
  PROXY_SPEC_LABEL,
  bootConfig,
  proxyContainerSpec,
  proxyPaths,
  withAdminSocket,
  type ProxyContainerSettings,
} from './proxy-container.js';

export const PROXY_CONTAINER = 'skiff-proxy';
export const PROXY_VOLUME = 'skiff-proxy-data';
export const PROXY_IMAGE = 'caddy:2';

export interface ProxyManagerOptions {
  driver: DockerDriver;
  /** The agent's data directory; the proxy's files go to `<dataDir>/proxy`. */
  dataDir: string;
  log: Logger;
  /** Host ports published for the container's 80 and 443. Default 80 and 443 on every address. */
  ports?: { http: number; https: number; hostIp?: string };
  /** Where the dashboard's container port is published; absent or null: not published. */
  dashboard?: { port: number; hostIp?: string } | null;
  /** Defaults: `skiff-proxy`, `skiff-proxy-data`, `skiff-network`, `caddy:2`. */
  containerName?: string;
  volumeName?: string;
  network?: string;
  image?: string;
  /** Between two keep-alive looks at the container. Default 1 s. */
  watchIntervalMs?: number;
  /** Default deadline of `apply` and `ensure`. Default 30 s. */
  timeoutMs?: number;
}

export type ApplyResult =
  /** Caddy runs the config, and it is the last good one. */
  | { ok: true }
  /** Caddy refused it (the running config stays): its HTTP status and reason. */
  | { ok: false; status: number; reason: string };

/** The proxy could not be reached (or brought back) within the deadline. */
export class ProxyUnavailableError extends Error {
  override readonly name = 'ProxyUnavailableError';
}

/** How long one look of the keep-alive watch may take to see the proxy answer. */
const WATCH_LOOK_MS = 8_000;

export class ProxyManager {
  private readonly driver: DockerDriver;
  private readonly log: Logger;
  private readonly settings: ProxyContainerSettings;
  private readonly paths: ReturnType<typeof proxyPaths>;
  private readonly watchIntervalMs: number;
  private readonly timeoutMs: number;
  /** The tail of the one-at-a-time lane of ensures and loads. */
  private lane: Promise<unknown> = Promise.resolve();
  private watching = false;
  private timer: NodeJS.Timeout | null = null;
  private tick: Promise<void> | null = null;
  private lastWatchProblem: string | null = null;

  constructor(options: ProxyManagerOptions) {
    this.driver = options.driver;
    this.log = options.log.child({ component: 'proxy' });
    const hostDir = resolve(options.dataDir, 'proxy');
    this.paths = proxyPaths(hostDir);
    this.settings = {
      name: options.containerName ?? PROXY_CONTAINER,
      image: options.image ?? PROXY_IMAGE,
      network: options.network ?? PLATFORM_NETWORK,
      volume: options.volumeName ?? PROXY_VOLUME,
      hostDir,
      ports: options.ports ?? { http: 80, https: 443 },
      dashboard: options.dashboard ?? null,
    };
    this.watchIntervalMs = options.watchIntervalMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The host path of the admin socket (for the agent alone: its directory is 0700). */
  get adminSocket(): string {
    return this.paths.socket;
  }

  get lastGoodPath(): string {
    return this.paths.lastGood;
  }

  /** The agent's `<data>/proxy` directory (absolute). */
  get directory(): string {
    return this.paths.dir;
  }

  get containerName(): string {
    return this.settings.name;
  }

  /**
   * Brings the proxy up and starts the keep-alive watch. A proxy that cannot be brought up
   * now is logged and tried again by the watch; the agent starts anyway.
   */
  async start(): Promise<void> {
    if (this.watching) return;
    this.watching = true;
    try {
      await this.ensure();
    } catch (err) {
      this.lastWatchProblem = withoutEngineIds((err as Error).message);
      this.log.error({ err }, 'the proxy could not be brought up; the keep-alive watch tries again');
    }
    this.schedule();
  }

  /** Ends the keep-alive watch (waiting for a look in progress). The container keeps running. */
  async stop(): Promise<void> {
    this.watching = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.tick;
  }

  /** Makes sure the container runs and its admin API answers, within the deadline. */
  ensure(timeoutMs = this.timeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    return this.exclusive(() => this.ensureRunning(deadline));
  }

  /**
   * Loads the whole config into Caddy (see the module comment); its `admin` block is replaced
   * by the socket-only one. Rejects with a ProxyUnavailableError when Caddy could not be
   * reached (or brought back) within the deadline, or the DockerError that prevented it.
   */
  apply(config: CaddyConfig, options: { timeoutMs?: number } = {}): Promise<ApplyResult> {
    if (!config || typeof config !== 'object' || Array.isArray(config)) {
      return Promise.reject(new TypeError('a Caddy config is a JSON object'));
    }
    const body = withAdminSocket(config);
    const deadline = Date.now() + (options.timeoutMs ?? this.timeoutMs);
    return this.exclusive(() => this.load(body, deadline));
  }

  private async load(config: CaddyConfig, deadline: number): Promise<ApplyResult> {
    const text = JSON.stringify(config);
    let answer;
    try {
      answer = await this.post(text, deadline);
    } catch (err) {
      if (!(err instanceof AdminUnreachableError)) throw err;
      this.log.warn({ reason: err.message }, 'the proxy did not answer; bringing it back before loading again');
      await this.ensureRunning(deadline);
      try {
        answer = await this.post(text, deadline);
      } catch (again) {
        if (again instanceof AdminUnreachableError) throw new ProxyUnavailableError(again.message, { cause: again });
        throw again;
      }
    }
    if (answer.status === 200) {
      writeConfigFile(this.paths.lastGood, config);
      return { ok: true };
    }
    const reason = caddyReason(answer);
    this.log.warn({ status: answer.status, reason }, 'Caddy refused the config; the running one stays');
    return { ok: false, status: answer.status, reason };
  }

  private post(body: string, deadline: number) {
    const timeoutMs = deadline - Date.now();
    if (timeoutMs <= 0) return Promise.reject(new ProxyUnavailableError('the deadline passed before the proxy answered'));
    return adminRequest(this.paths.socket, 'POST', '/load', { body, timeoutMs });
  }

  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.lane.then(run, run);
    this.lane = result.catch(() => undefined);
    return result;
  }

  private prepareFiles(): void {
    mkdirSync(this.paths.socketDir, { recursive: true, mode: 0o700 });
    // The socket's directory is the admin API's only access control.
    chmodSync(this.paths.dir, 0o700);
    chmodSync(this.paths.socketDir, 0o700);
    if (readConfigFile(this.paths.lastGood) === null) {
      // None yet, or unreadable (Caddy would not boot from it).
      writeConfigFile(this.paths.lastGood, bootConfig());
    }
  }

  private async ensureRunning(deadline: number): Promise<void> {
    const spec = proxyContainerSpec(this.settings);
    let current: ContainerInfo | null = await this.driver.containerByName(spec.Name);
    if (current && (current.labels[PROXY_SPEC_LABEL] !== spec.Labels[PROXY_SPEC_LABEL] || current.state === 'dead' || current.state === 'paused')) {
      this.log.info({ container: spec.Name, state: current.state }, 'recreating the proxy container');
      // Throws when a container of that name is not Skiff's: it is left alone.
      await this.driver.removeContainer(spec.Name);
      current = null;
    }
    if (current === null) {
      this.prepareFiles();
      if (!(await this.driver.imageExists(spec.Image))) await this.driver.pullImage(spec.Image);
      await this.driver.ensureSwarm();
      await this.driver.ensureNetwork(this.settings.network);
      await this.driver.ensureVolume(this.settings.volume, { 'skiff.kind': 'proxy' });
      current = await this.driver.createContainer(spec);
      this.log.info({ container: spec.Name, ports: this.settings.ports }, 'proxy container created');
    }
    if (current.state === 'created' || current.state === 'exited') {
      this.prepareFiles();
      await this.driver.startContainer(spec.Name);
      this.log.info({ container: spec.Name }, 'proxy container started');
    }
    await this.waitForAdmin(deadline);
  }

  private async waitForAdmin(deadline: number): Promise<void> {
    let last = '';
    for (;;) {
      const timeoutMs = Math.min(2000, deadline - Date.now());
      if (timeoutMs > 0) {
        try {
          const answer = await adminRequest(this.paths.socket, 'GET', '/config/admin', { timeoutMs });
          if (answer.status === 200) return;
          last = `HTTP ${answer.status}: ${caddyReason(answer)}`;
        } catch (err) {
          last = (err as Error).message;
        }
      }
      if (Date.now() >= deadline) throw new ProxyUnavailableError(`the proxy's admin API did not answer in time (${last})`);
      await new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now()))));
    }
  }

  private schedule(): void {
    if (!this.watching) return;
    this.timer = setTimeout(() => {
      this.tick = this.watchOnce().finally(() => {
        this.tick = null;
        this.schedule();
      });
    }, this.watchIntervalMs);
    this.timer.unref();
  }

  private async watchOnce(): Promise<void> {
    try {
      // A short look: a container removed while it was looked at (seen running, then gone)
      // is found missing by the next look instead of being waited for.
      await this.ensure(WATCH_LOOK_MS);
      if (this.lastWatchProblem !== null) this.log.info('the proxy is back');
      this.lastWatchProblem = null;
    } catch (err) {
      const problem = withoutEngineIds((err as Error).message);
      // Once per distinct problem, not every second.
      if (problem !== this.lastWatchProblem) this.log.error({ err }, 'the proxy could not be brought back');
      this.lastWatchProblem = problem;
    }
  }
}
