import type { LogLevel } from '../log/levels'
import type { CliIo, GlobalOptions } from './io'

/** What a command gets: the global options and one way to print for people and for scripts. */
export interface CommandContext {
  io: CliIo
  globals: () => GlobalOptions & { logLevel: LogLevel }
  /** `--json` prints `value` as one JSON document; otherwise `text` for people. */
  print: (value: unknown, text: string) => void
}
