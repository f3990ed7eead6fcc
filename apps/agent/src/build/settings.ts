/**
 * How this agent runs builds: which docker CLI, against which engine, where its work
 * directories live, and how long a build may take. From the agent's configuration.
 */
import { existsSync } from 'node:fs';
import type { ArchiveFetcher } from '../reports/artifacts.js';
import type { BuildCap } from './build-cap.js';

export interface BuildSettings {
  /** The agent's data directory: work directories (`builds/`) and `known_hosts` live there. */
  dataDir: string;
  /** The docker CLI program (SKIFF_DOCKER_CLI; see dockerCliOf). */
  dockerCli: string;
  /** The engine's unix socket the CLI talks to (DOCKER_HOST), the agent's SKIFF_DOCKER_SOCKET. */
  dockerSocket: string;
  /** Longest build (fetch + build) when the command's deadline allows more. */
  timeoutMs: number;
  /** PATH for builder programs (and where external builders are looked for); default the agent's. */
  path?: string;
  /** HOME for builder programs; default the agent's. */
  home?: string;
  /** Downloads uploaded archives (drop sources) from the control plane; without it they fail. */
  artifacts?: ArchiveFetcher;
  /** The CPU and memory cap of the server's BuildKit steps; absent: builds run uncapped. */
  cap?: BuildCap;
}

export const DEFAULT_BUILD_TIMEOUT_MS = 30 * 60_000;

/** The configured CLI, else Debian's /usr/bin/docker (it matches the engine) when present, else `docker` on PATH. */
export function dockerCliOf(configured: string | null | undefined): string {
  if (configured && configured.trim() !== '') return configured.trim();
  return existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
}

/** The environment every builder program starts from; nothing else of the agent's (its credential) is passed. */
export function baseEnv(settings: BuildSettings): Record<string, string> {
  return {
    PATH: settings.path ?? process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: settings.home ?? process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    DOCKER_HOST: `unix://${settings.dockerSocket}`,
  };
}
