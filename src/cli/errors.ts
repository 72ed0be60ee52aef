/**
 * Exit codes scripts can rely on, and the error a command throws for a mistake of the user's: the entry
 * point prints its message on one line (no stack trace) and exits with its code.
 */
export const EXIT_OK = 0;
/** A check failed (an invalid event) or a request did (a non-2xx answer, an unreachable URL). */
export const EXIT_FAILED = 1;
/** The command line itself is wrong: an unknown option, a missing argument, a bad value. */
export const EXIT_USAGE = 2;

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
  }
}

/** A usage mistake: exit code 2. */
export const usageError = (message: string) => new CliError(message, EXIT_USAGE);

/** A failed check or request: exit code 1. */
export const failure = (message: string) => new CliError(message, EXIT_FAILED);
