import { EXIT, type ExitCode } from './exit-codes'

/** An error a command raises on purpose, with its exit code and a message that says what to do. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
    readonly code = 'FAILED',
    /**
     * The command already printed its JSON document, which tells the failure (an upload's
     * summary with its failed files): `--json` then prints no second one.
     */
    readonly printed = false,
  ) {
    super(message)
    this.name = 'CliError'
  }
}
