import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { usage } from './errors.js';
import { trimTrailing } from './text.js';

export interface Context {
  url: string;
  apiKey: string;
}

export interface Config {
  current: string | null;
  contexts: Record<string, Context>;
}

/** Where contexts are kept: `$XDG_CONFIG_HOME/skiff` or `~/.config/skiff`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'skiff');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(join(configDir(env), 'config.json'), 'utf8');
  } catch {
    return { current: null, contexts: {} };
  }
  const parsed = JSON.parse(text) as Partial<Config>;
  return { current: parsed.current ?? null, contexts: parsed.contexts ?? {} };
}

/** Written whole through a temporary file, readable by its owner only (0600 in a 0700 folder). */
export function writeConfig(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = join(dir, 'config.json');
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * The server and key a command uses: `SKIFF_URL`/`SKIFF_API_KEY` override the current
 * context (or the one `--context` names) field by field.
 */
export function resolveContext(env: NodeJS.ProcessEnv, name?: string): Context & { name: string | null } {
  const config = readConfig(env);
  const chosen = name ?? config.current;
  if (name && !config.contexts[name]) throw usage(`no context named "${name}" (skiff context list)`);
  const stored = chosen ? config.contexts[chosen] : undefined;
  const url = env.SKIFF_URL || stored?.url;
  const apiKey = env.SKIFF_API_KEY || stored?.apiKey;
  if (!url || !apiKey) throw usage('not logged in: run `skiff login <url>`, or set SKIFF_URL and SKIFF_API_KEY');
  return { name: stored ? chosen : null, url: trimTrailing(url, '/'), apiKey };
}
