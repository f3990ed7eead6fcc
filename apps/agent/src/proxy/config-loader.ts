/**
 * ProxyConfigLoader: every change of the proxy's config goes through here, one at a time (one
 * lock): an ApplyProxyConfig input, a configuration file write, the dashboard switch, a
 * reload. Each renders the WHOLE config (render.ts) from the last applied input, the files
 * and the dashboard state, and loads it through ProxyManager (Caddy's `/load`). What was
 * asked is kept (input.json, the file, dashboard.json) only once Caddy runs it: refused by
 * the renderer or by Caddy, nothing on disk changes and the running config stays.
 */
import { join } from 'node:path';
import { CaddyConfigError } from '@skiff/domain';
import type { Logger } from 'pino';
import type { ProxySettings } from '../config.js';
import { appliedRevisionPath, readAppliedRevision } from './applied-revision.js';
import { ProxyConfigDir } from './config-dir.js';
import { readConfigFile, writeConfigFile } from './last-good.js';
import { ProxyFileError, parseProxyFile, type ProxyFileName } from './proxy-files.js';
import { EMPTY_INPUT, INPUT_FILE, readSavedInput, saveInput, type ProxyInput } from './proxy-input.js';
import { ProxyUnavailableError, type ProxyManager } from './proxy-manager.js';
import { ProxyRequestRefused } from './refusal.js';
import { renderProxyConfig } from './render.js';

export const CONFIG_DIR = 'config';
export const DASHBOARD_FILE = 'dashboard.json';

export interface ProxyConfigLoaderOptions {
  proxy: Pick<ProxyManager, 'adminSocket' | 'directory' | 'lastGoodPath' | 'apply' | 'start' | 'ensure'>;
  settings: Pick<ProxySettings, 'httpsPort' | 'issuer' | 'acmeEmail' | 'dashboardPort'>;
  log: Logger;
}

export type LoadResult = { ok: true } | { ok: false; reason: string };

export interface DashboardState {
  enabled: boolean;
  /** The host port it is published on; 0: none. */
  port: number;
}

/** The renderer or Caddy refused a config the caller did not write (a reload, the dashboard switch). */
export class ProxyConfigRefusedError extends Error {
  override readonly name = 'ProxyConfigRefusedError';
}

/** The lock was not free before the request's deadline. */
export class ProxyBusyError extends Error {
  override readonly name = 'ProxyBusyError';
}

export class ProxyConfigLoader {
  readonly files: ProxyConfigDir;
  private readonly inputPath: string;
  private readonly dashboardPath: string;
  private lane: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ProxyConfigLoaderOptions) {
    const dir = options.proxy.directory;
    this.files = new ProxyConfigDir(join(dir, CONFIG_DIR));
    this.inputPath = join(dir, INPUT_FILE);
    this.dashboardPath = join(dir, DASHBOARD_FILE);
  }

  /** Where ApplyProxyConfig keeps the revision it applied last. */
  get revisionPath(): string {
    return appliedRevisionPath(this.options.proxy.lastGoodPath);
  }

  /** Whether an applied input is kept (an agent before input.json applied one without keeping it). */
  hasSavedInput(): boolean {
    return readConfigFile(this.inputPath) !== null;
  }

  /** ApplyProxyConfig: renders the input with the files and loads it; accepted, it is the last applied input. */
  applyInput(input: ProxyInput, timeoutMs: number): Promise<LoadResult> {
    return this.exclusive(timeoutMs, async (deadline) => {
      const result = await this.load(input, this.dashboardOn(), deadline, undefined, 'input_json is not a proxy input');
      if (result.ok) saveInput(this.inputPath, input);
      return result;
    });
  }

  /**
   * Writes one of the three files: refused (field `path`) for another path, (field
   * `content`) for content that is not what the file must hold or a config the renderer or
   * Caddy refuses with it, the reason saying why.
   */
  writeFile(path: string, content: string, timeoutMs: number): Promise<void> {
    return this.exclusive(timeoutMs, async (deadline) => {
      const name: ProxyFileName = this.files.writable(path);
      const parsed = parseProxyFile(name, content);
      if ('reason' in parsed) throw new ProxyRequestRefused('content', parsed.reason);
      const result = await this.load(this.lastInput(), this.dashboardOn(), deadline, { name, text: content });
      if (!result.ok) throw new ProxyRequestRefused('content', result.reason);
      this.files.write(name, content);
      this.options.log.info({ file: name }, 'proxy configuration file written and loaded');
    });
  }

  /** Turns the dashboard on or off (`enable` absent: flips it); refused (field `enable_dashboard`) on when it has no port. */
  toggleDashboard(enable: boolean | undefined, timeoutMs: number): Promise<DashboardState> {
    return this.exclusive(timeoutMs, async (deadline) => {
      const port = this.options.settings.dashboardPort;
      const enabled = enable ?? !this.dashboardOn();
      if (enabled && port === 0) {
        throw new ProxyRequestRefused('enable_dashboard', 'the proxy dashboard is not published on this server (SKIFF_PROXY_DASHBOARD_PORT is 0)');
      }
      const result = await this.load(this.lastInput(), enabled, deadline);
      if (!result.ok) throw new ProxyConfigRefusedError(result.reason);
      writeConfigFile(this.dashboardPath, { enabled });
      this.options.log.info({ enabled }, 'proxy dashboard switched');
      return { enabled, port };
    });
  }

  /** Renders and loads the config again, the container brought back first when it is not running. */
  reload(timeoutMs: number): Promise<void> {
    return this.exclusive(timeoutMs, async (deadline) => {
      await this.options.proxy.ensure(Math.max(1, deadline - Date.now()));
      const result = await this.load(this.lastInput(), this.dashboardOn(), deadline);
      if (!result.ok) throw new ProxyConfigRefusedError(result.reason);
      this.options.log.info('proxy config reloaded');
    });
  }

  dashboard(): DashboardState {
    return { enabled: this.dashboardOn(), port: this.options.settings.dashboardPort };
  }

  private dashboardOn(): boolean {
    return this.options.settings.dashboardPort !== 0 && readConfigFile(this.dashboardPath)?.enabled === true;
  }

  private lastInput(): ProxyInput {
    const saved = readSavedInput(this.inputPath);
    if (saved) return saved;
    // Rendering without the routes an earlier agent applied would take them all down.
    if (readAppliedRevision(this.revisionPath) !== null) {
      throw new ProxyConfigRefusedError('this agent does not have the last applied proxy input yet; apply the proxy config again first');
    }
    return EMPTY_INPUT;
  }

  private async load(
    input: ProxyInput,
    dashboard: boolean,
    deadline: number,
    replace?: { name: ProxyFileName; text: string },
    badInput = 'the last applied proxy input is not valid',
  ): Promise<LoadResult> {
    let config;
    try {
      const files = this.files.files(replace);
      config = renderProxyConfig({ input, files, adminSocket: this.options.proxy.adminSocket, settings: this.options.settings, dashboard });
    } catch (err) {
      if (err instanceof CaddyConfigError || err instanceof ProxyFileError) return { ok: false, reason: err.message };
      // The renderer trusts the field types of the input; a wrong one surfaces as a TypeError.
      if (err instanceof TypeError) return { ok: false, reason: `${badInput}: ${err.message}` };
      throw err;
    }
    const timeoutMs = deadline - Date.now();
    if (timeoutMs <= 0) throw new ProxyUnavailableError('the deadline passed before the config could be loaded');
    // The first load brings the proxy up; from then on it is watched (and this is a no-op).
    void this.options.proxy.start();
    const result = await this.options.proxy.apply(config, { timeoutMs });
    return result.ok ? result : { ok: false, reason: `Caddy refused the config (HTTP ${result.status}): ${result.reason}` };
  }

  private exclusive<T>(timeoutMs: number, run: (deadline: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    const go = async () => {
      if (Date.now() >= deadline) throw new ProxyBusyError('another change of the proxy config took the time; nothing was changed, try again');
      this.files.ensure();
      return run(deadline);
    };
    const result = this.lane.then(go, go);
    this.lane = result.catch(() => undefined);
    return result;
  }
}
