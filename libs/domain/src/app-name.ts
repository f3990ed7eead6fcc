/**
 * The rules of an `appName`, in one place. An appName names a workload everywhere: the API
 * field (spec "AppName"), the Swarm service of an application or cache, the compose project
 * (or Swarm stack) of a compose stack. Each use is the API's rule narrowed by what Docker
 * takes, so the narrower rules are written here beside it, not in the apps:
 *
 * - `APP_NAME`: what the API accepts (1 to 63 letters, digits, '.', '_', '-').
 *   libs/contracts depends on zod only, so `AppName` there repeats this pattern;
 *   tools/app-name.spec.ts fails when the two differ.
 * - `SERVICE_NAME`: a Swarm service name (swarmkit's `isValidDNSName`: letters and digits,
 *   runs of '-' or '_' only between them, at most 63): no dots.
 * - `PROJECT_NAME`: a compose project name (Compose v2's rule): lower case, no dots.
 *
 * Every pattern here is linear: no quantified group holds a quantifier whose characters can
 * also start the next iteration (tools/redos.spec.ts checks every regex of the repository).
 * swarmkit writes its rule `^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$`, which Go runs in linear
 * time but a backtracking engine (JavaScript's) in exponential time on `'a'.repeat(32) + '.'`;
 * `SERVICE_NAME` is the same language, unambiguous.
 */

export const APP_NAME_MAX = 63;

/** The API's appName characters (the length is checked apart: `APP_NAME_MAX`). */
export const APP_NAME = /^[a-zA-Z0-9._-]+$/;
/** What `APP_NAME` asks for, as the API's validation message says it. */
export const APP_NAME_MESSAGE = 'only letters, digits, dot, underscore and hyphen';

/** Swarm service names: the same language as swarmkit's rule, without nested ambiguity. */
export const SERVICE_NAME = /^[a-zA-Z0-9]+(?:[-_]+[a-zA-Z0-9]+)*$/;

/** Compose project names (and Swarm stack names, which Skiff gives the same). */
export const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Why `name` is not an appName the API takes, or null. */
export function refuseAppName(name: string): string | null {
  if (typeof name !== 'string' || name.length < 1 || name.length > APP_NAME_MAX) return `appName must be 1 to ${APP_NAME_MAX} characters`;
  return APP_NAME.test(name) ? null : `appName ${JSON.stringify(name)}: ${APP_NAME_MESSAGE}`;
}

/** Why `name` cannot name a Swarm service, or null. */
export function refuseServiceName(name: string): string | null {
  if (typeof name === 'string' && name.length <= APP_NAME_MAX && SERVICE_NAME.test(name)) return null;
  return `invalid service name ${JSON.stringify(name)}: letters, digits, '-' and '_', starting and ending with a letter or digit, at most ${APP_NAME_MAX} characters`;
}

/**
 * Why `appName` cannot name a compose project (or Swarm stack), or null. Compose v2 refuses
 * other project names and v1 rewrites them, so two appNames could share one project.
 */
export function refuseProjectName(appName: string): string | null {
  return typeof appName === 'string' && PROJECT_NAME.test(appName)
    ? null
    : `appName "${appName}" cannot name a compose project: use lowercase letters, digits, "-" and "_" (starting with a letter or digit)`;
}
