/**
 * Which Docker Compose program this server has, found once when the agent starts:
 *
 * 1. SKIFF_COMPOSE_PROGRAM when set: `docker compose` (the docker CLI's plugin; `<cli path>
 *    compose` names the CLI too), or the path or name of a standalone program (`docker-compose`,
 *    v1 or v2);
 * 2. else the docker CLI's plugin (`docker compose`, Compose v2), when `docker compose version`
 *    answers;
 * 3. else `docker-compose` on PATH (Compose v1 on Debian 12, or a standalone v2).
 *
 * Each candidate must answer `version --short` within a few seconds. None found is not an
 * error at start: `container-compose` deploys then fail naming what is missing, and `stack`
 * deploys need only the docker CLI (`docker stack deploy`).
 */
import { runChild, resolveProgram } from '../build/child-process.js';

export interface ComposeProgram {
  /** What is run: the docker CLI (the plugin) or a standalone program. */
  file: string;
  /** Arguments before Compose's own: `['compose']` for the plugin, none for a standalone program. */
  prefix: string[];
  /** How logs and errors call it: `docker compose` or `docker-compose`. */
  name: string;
  /** As `version --short` printed it, e.g. `1.29.2` or `2.27.0`. */
  version: string;
}

/** The program found, or why there is none (a sentence naming what to install or set). */
export type ComposeProgramChoice = { program: ComposeProgram; missing?: undefined } | { program: null; missing: string };

export interface DetectOptions {
  /** The docker CLI (dockerCliOf). */
  dockerCli: string;
  /** SKIFF_COMPOSE_PROGRAM, or null. */
  configured: string | null;
  /** Environment the candidates run with (PATH, HOME, DOCKER_HOST). */
  env: Record<string, string>;
  timeoutMs?: number;
}

export const NO_COMPOSE_PROGRAM =
  'this server has no Docker Compose program: neither the docker CLI plugin (`docker compose`) nor `docker-compose` answered; install one (Debian: apt-get install docker-compose) or set SKIFF_COMPOSE_PROGRAM';

export async function detectComposeProgram(options: DetectOptions): Promise<ComposeProgramChoice> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const configured = options.configured?.trim() ?? '';
  if (configured !== '') {
    const candidate = candidateOf(configured, options.dockerCli);
    if (!candidate) return { program: null, missing: 'SKIFF_COMPOSE_PROGRAM must be `docker compose`, `<docker cli> compose` or a docker-compose program' };
    const found = await tryCandidate(candidate, options.env, timeoutMs);
    return found ? { program: found } : { program: null, missing: `SKIFF_COMPOSE_PROGRAM (${configured}) does not answer \`version\`` };
  }
  const plugin = await tryCandidate({ file: options.dockerCli, prefix: ['compose'], name: 'docker compose' }, options.env, timeoutMs);
  if (plugin) return { program: plugin };
  const standalone = await tryCandidate({ file: 'docker-compose', prefix: [], name: 'docker-compose' }, options.env, timeoutMs);
  if (standalone) return { program: standalone };
  return { program: null, missing: NO_COMPOSE_PROGRAM };
}

type Candidate = Omit<ComposeProgram, 'version'>;

function candidateOf(configured: string, dockerCli: string): Candidate | null {
  const words = configured.split(/\s+/);
  if (words.length === 2 && words[1] === 'compose') {
    return { file: words[0] === 'docker' ? dockerCli : words[0]!, prefix: ['compose'], name: 'docker compose' };
  }
  if (words.length === 1) return { file: words[0]!, prefix: [], name: 'docker-compose' };
  return null;
}

async function tryCandidate(candidate: Candidate, env: Record<string, string>, timeoutMs: number): Promise<ComposeProgram | null> {
  const file = resolveProgram(candidate.file, env.PATH ?? '');
  if (!file) return null;
  const lines: string[] = [];
  const result = await runChild({
    file,
    args: [...candidate.prefix, 'version', '--short'],
    env,
    signal: new AbortController().signal,
    deadline: Date.now() + timeoutMs,
    onLine: (line) => lines.push(line),
  });
  const version = lines.map((l) => l.trim()).find((l) => /^v?\d+\.\d+/.test(l));
  if (result.code !== 0 || !version) return null;
  return { ...candidate, file, version: version.replace(/^v/, '') };
}
