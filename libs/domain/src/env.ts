import { parseDotenv } from './dotenv.js';

/**
 * The environment a service runs with, computed at deploy time from three dotenv texts:
 * the project's, the environment's and the service's own.
 *
 * Final set: every project variable, then every environment variable, then every service
 * variable; a name defined at several levels takes the most specific value (service over
 * environment over project). The order is the order names were first seen.
 *
 * References, substituted in the service's values only:
 * - `${{project.NAME}}`: the project's NAME, as written;
 * - `${{environment.NAME}}`: the environment's NAME, as written;
 * - `${{NAME}}`: the same service's NAME, itself resolved (so `URL=${{HOST}}:${{PORT}}`
 *   with `HOST=${{project.DB_HOST}}` works). Chains within the service are followed; a
 *   cycle (`A=${{B}}`, `B=${{A}}`) fails and names the whole loop.
 * Project and environment values are never interpolated: a `${{…}}` in them reaches the
 * service unchanged. That keeps resolution to one level across scopes, and a project value
 * cannot depend on which service reads it.
 * Spaces inside the braces are allowed (`${{ project.NAME }}`); a `${{` without a closing
 * `}}` is plain text; anything else inside `${{ }}` that is not a reference fails.
 */

export class EnvError extends Error {
  override name = 'EnvError';
}

export interface ServiceEnvSources {
  /** The service's own dotenv text (application or cache instance). */
  service: string | null | undefined;
  environment: string | null | undefined;
  project: string | null | undefined;
}

type Scope = 'project' | 'environment';
type Reference = { scope: Scope | 'service'; name: string };
type Variables = Map<string, string>;

/** Deeper chains of `${{NAME}}` than this are refused (they are mistakes, or hostile). */
const MAX_DEPTH = 64;
/** `[^{}]`, not `[^}]`: a body that could hold `${{` is retried from each one (quadratic). */
const REFERENCE = /\$\{\{([^{}]*)\}\}/g;
const REFERENCE_BODY = /^(?:(project|environment)\.)?([A-Za-z_][A-Za-z0-9_]*)$/;

/** The resolved variables as Docker takes them: `KEY=VALUE` strings. */
export function resolveServiceEnv(sources: ServiceEnvSources): string[] {
  return envList(resolveServiceVariables(sources));
}

/** The resolved variables by name (for messages that carry a map). */
export function resolveServiceVariables(sources: ServiceEnvSources): Map<string, string> {
  const scopes = {
    project: variablesOf(sources.project, 'project'),
    environment: variablesOf(sources.environment, 'environment'),
  };
  const service = resolveService(variablesOf(sources.service, 'service'), scopes);
  return new Map([...scopes.project, ...scopes.environment, ...service]);
}

export function envList(variables: Map<string, string>): string[] {
  return [...variables].map(([name, value]) => `${name}=${value}`);
}

function variablesOf(text: string | null | undefined, level: string): Variables {
  const { variables, issues } = parseDotenv(text ?? '');
  if (issues.length === 0) return variables;
  const details = issues.map((i) => `line ${i.line}: ${i.message}`).join('; ');
  throw new EnvError(`Invalid ${level} env (${details})`);
}

function resolveService(service: Variables, scopes: Record<Scope, Variables>): Variables {
  const resolved: Variables = new Map();
  const chain: string[] = [];
  const resolveName = (name: string): string => {
    const done = resolved.get(name);
    if (done !== undefined) return done;
    const raw = service.get(name);
    if (raw === undefined) throw new EnvError(`Invalid environment variable: ${name}`);
    enter(chain, name);
    const value = substitute(raw, (ref) =>
      ref.scope === 'service' ? resolveName(ref.name) : lookup(scopes[ref.scope], ref),
    );
    chain.pop();
    resolved.set(name, value);
    return value;
  };
  return new Map([...service.keys()].map((name) => [name, resolveName(name)]));
}

function enter(chain: string[], name: string): void {
  const seen = chain.indexOf(name);
  if (seen >= 0) {
    const loop = [...chain.slice(seen), name].join(' -> ');
    throw new EnvError(`Environment variable reference cycle: ${loop}`);
  }
  if (chain.length >= MAX_DEPTH) {
    throw new EnvError(`Environment variable references nest deeper than ${MAX_DEPTH} levels at ${name}`);
  }
  chain.push(name);
}

function lookup(variables: Variables, ref: Reference): string {
  const value = variables.get(ref.name);
  if (value === undefined) throw new EnvError(`Invalid environment variable: ${ref.scope}.${ref.name}`);
  return value;
}

function substitute(value: string, resolve: (ref: Reference) => string): string {
  return value.replace(REFERENCE, (_whole, body: string) => resolve(parseReference(body)));
}

function parseReference(body: string): Reference {
  const match = REFERENCE_BODY.exec(body.trim());
  if (!match) throw new EnvError(`Invalid environment variable reference: \${{${body}}}`);
  const scope = (match[1] as Scope | undefined) ?? 'service';
  return { scope, name: match[2] };
}
