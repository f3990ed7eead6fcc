/**
 * Tests only: `tools/up` run as a reader runs it, on the embedded database, in a data
 * directory and on ports of the test (NATS in its own process, no outside NATS URL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from './wait-for.js';

export interface ToolsUpOptions {
  /** The repository's root (tools/up is run from there). */
  root: string;
  dataDir: string;
  ports: { api: number; grpc: number; nats: number };
  /** Added to (or overriding) the environment tools/up gets. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface ToolsUp {
  readonly child: ChildProcess;
  /** What tools/up printed so far (stdout and stderr). */
  output(): string;
  /** Stops it as SIGTERM (or Ctrl-C) would; answers its exit code (null when a signal ended it). */
  stop(): Promise<number | null>;
}

/** Starts tools/up and resolves once it printed `Skiff is up.`; rejects when it exits first. */
export async function startToolsUp(o: ToolsUpOptions): Promise<ToolsUp> {
  const { DATABASE_URL: _external, ...inherited } = process.env;
  let output = '';
  const child = spawn('bash', ['tools/up'], {
    cwd: o.root,
    env: {
      ...inherited,
      SKIFF_DATA_DIR: o.dataDir,
      SKIFF_PORT: String(o.ports.api),
      SKIFF_GRPC_PORT: String(o.ports.grpc),
      SKIFF_NATS_PORT: String(o.ports.nats),
      SKIFF_NATS_URL: '',
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const up: ToolsUp = {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return ended;
    },
  };
  const exitedEarly = ended.then((code) => {
    throw new Error(`tools/up exited (${code}):\n${output}`);
  });
  exitedEarly.catch(() => {});
  await Promise.race([waitFor(() => output.includes('Skiff is up.'), { timeoutMs: o.timeoutMs ?? 180_000, what: 'tools/up to start' }), exitedEarly]);
  return up;
}
