/**
 * A dump tool run as a child process, its standard output streamed: no shell, arguments as a
 * list, the password in the environment (never in the argument list `ps` shows).
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface DumpProcess {
  output: Readable;
  /** Settles when the tool exits: rejects with the end of its standard error when it failed. */
  exited: Promise<void>;
  /** The output is gzipped already (the embedded database's, read-ahead.ts). */
  gzipped?: boolean;
}

const STDERR_KEPT = 4096;

export function runDump(command: string, args: string[], env: Record<string, string> = {}): DumpProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT)));
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`${command} could not start: ${err.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
  });
  return { output: child.stdout, exited };
}

/**
 * `pg_dump` of a Postgres URL, plain SQL: the URL's password goes to PGPASSWORD and the
 * connection string passed on the command line carries none.
 */
export function pgDump(databaseUrl: string): DumpProcess {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return runDump('pg_dump', ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${url.toString()}`], password ? { PGPASSWORD: password } : {});
}
