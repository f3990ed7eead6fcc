/**
 * A build that cannot go on, for a reason the user can act on (a clone refused, a build step
 * that failed, a missing builder program): the deployment ends in error with this message.
 * Messages never carry secrets (build secret values, credentials of clone URLs).
 */
export class BuildError extends Error {
  override name = 'BuildError';
  /** How the builder program ended, when it ran and failed. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}
