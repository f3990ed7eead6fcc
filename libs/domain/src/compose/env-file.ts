/**
 * The `.env` file written beside a stack's compose file.
 *
 * Its variables are the stack's environment as applications get theirs (`resolveServiceEnv`):
 * the project's variables, then the environment's, then the stack's own `env`, with
 * `${{project.NAME}}`, `${{environment.NAME}}` and `${{NAME}}` substituted and an undefined
 * reference failing with `Invalid environment variable: …`.
 *
 * Compose reads this file for its own interpolation of the compose file (`${VAR}`,
 * `${VAR:-default}` in `image:`, `environment:` and so on). That interpolation is Compose's:
 * nothing here expands `${VAR}` in the compose file or in values. Values are written so that
 * Docker Compose (v2) reads back exactly the string Skiff resolved, never expanding a `$` in
 * it:
 * - unquoted when made only of letters, digits and `_ . / : @ % + , = ^ ~ -` (empty included);
 * - otherwise in single quotes (literal in Compose), a `'` written `\'`, when the value has no
 *   backslash, or has no `'` and does not end with a backslash;
 * - otherwise (both `'` and `\`) in double quotes with `\\`, `\"`, `\n`, `\r` escapes, which
 *   requires the value to hold no `$` (Compose expands `$` in double quotes and the escape of
 *   a `$` differs between Compose versions): such a value is refused, naming the variable.
 * Multi-line values (PEM keys) are kept, quoted. Compose v1 (`docker-compose` 1.x) reads the
 * same file with python-dotenv, which also expands `${VAR}` inside single quotes: there,
 * prefer values without `${`.
 */
import { EnvError, resolveServiceVariables, type ServiceEnvSources } from '../env.js';

/** The `.env` text for a stack: its resolved environment, one `NAME=value` line each. */
export function composeDotenv(sources: ServiceEnvSources): string {
  return formatComposeDotenv(resolveServiceVariables(sources));
}

/** `NAME=value` lines (each ending in a newline) that Docker Compose reads back exactly. */
export function formatComposeDotenv(variables: ReadonlyMap<string, string>): string {
  return [...variables].map(([name, value]) => `${name}=${composeDotenvValue(name, value)}\n`).join('');
}

const UNQUOTED = /^[A-Za-z0-9_./:@%+,=^~-]*$/;

function composeDotenvValue(name: string, value: string): string {
  if (UNQUOTED.test(value)) return value;
  const hasQuote = value.includes("'");
  const hasBackslash = value.includes('\\');
  if (!hasBackslash || (!hasQuote && !value.endsWith('\\'))) return `'${value.replaceAll("'", "\\'")}'`;
  if (value.includes('$')) {
    throw new EnvError(
      `Environment variable ${name} cannot be written to the stack's .env file: a value holding ', \\ and $ together has no form Docker Compose reads back unchanged`,
    );
  }
  const escaped = value.replace(/[\\"\n\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r' })[c] as string);
  return `"${escaped}"`;
}
