/** The CLI's exit codes (README, "The skiff CLI"). */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

export interface Issue {
  path: string;
  message: string;
}

/** Ends the command with `code`; `issues` are printed as `field: reason`. */
export class CliError extends Error {
  constructor(
    readonly code: (typeof EXIT)[keyof typeof EXIT],
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
  }
}

export const usage = (message: string, issues: Issue[] = []) => new CliError(EXIT.usage, message, issues);
export const refused = (message: string, issues: Issue[] = []) => new CliError(EXIT.refused, message, issues);
export const unreachable = (message: string) => new CliError(EXIT.unreachable, message);
