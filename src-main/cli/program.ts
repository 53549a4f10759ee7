import { Command, CommanderError, Option } from 'commander'
import { defaultHome } from '../app/paths'
import { APP_VERSION } from '../app/version'
import { DEFAULT_LOG_LEVEL, LOG_LEVEL_ENV, LOG_LEVELS, type LogLevel } from '../log/levels'
import { registerFeedback, registerOutbox } from './commands/outbox'
import { registerProfile } from './commands/profile'
import { registerProvenance } from './commands/provenance'
import { registerRun } from './commands/run'
import { registerSandbox } from './commands/sandbox'
import { registerSearch } from './commands/search'
import { registerSync } from './commands/sync'
import { registerUpload } from './commands/upload'
import { registerVersion } from './commands/version'
import { registerWeb } from './commands/web'
import { registerWorkflow } from './commands/workflow'
import { EXIT, type ExitCode } from './exit-codes'
import type { CommandContext } from './context'
import { CliError } from './errors'
import type { CliIo, GlobalOptions } from './io'

function buildProgram(io: CliIo, onExitCode: (code: ExitCode) => void): Command {
  const program = new Command('atelier')
  const context: CommandContext = {
    io,
    globals: () => program.opts<GlobalOptions & { logLevel: LogLevel }>(),
    print: (value, text) => {
      io.stdout(context.globals().json ? `${JSON.stringify(value)}\n` : `${text}\n`)
    },
  }
  program
    .description('Atelier: run AI image and video flows, review runs offline, upload folders.')
    .version(APP_VERSION, '-v, --version', 'print the version and exit')
    .addOption(
      new Option('--home <dir>', 'folder for all local data (mirror, ledger, caches)').default(
        defaultHome(),
        'the OS app-data folder',
      ),
    )
    .option('--profile <name>', 'the service profile to use (default: the current one)')
    .option('--json', 'print one JSON document on stdout, for scripts', false)
    .addOption(
      new Option('--log-level <level>', 'how much goes to <home>/logs/atelier.log')
        .choices(LOG_LEVELS)
        .env(LOG_LEVEL_ENV)
        .default(DEFAULT_LOG_LEVEL),
    )
    .showHelpAfterError('(run `atelier --help` to see the commands)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .addHelpText(
      'after',
      '\nExit codes: 0 success, 1 the work failed, 2 bad usage or input.\nRun with npm: npm run atelier -- <command>',
    )
    .exitOverride((error) => {
      // Help and version are successes; every other parse problem is bad usage.
      onExitCode(error.exitCode === 0 ? EXIT.ok : EXIT.usage)
      throw error
    })
  registerVersion(program, context)
  registerSandbox(program, context)
  registerProfile(program, context)
  registerSync(program, context)
  registerSearch(program, context)
  registerOutbox(program, context)
  registerFeedback(program, context)
  registerRun(program, context)
  registerUpload(program, context)
  registerWeb(program, context)
  registerProvenance(program, context)
  registerWorkflow(program, context)
  return program
}

/** Runs one command line (without the node and script arguments) and answers its exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  // Commander reports its own exits through the callback, before it throws.
  const outcome: { exitCode: ExitCode } = { exitCode: EXIT.ok }
  const program = buildProgram(io, (code) => {
    outcome.exitCode = code
  })
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return outcome.exitCode
  } catch (error) {
    const json = program.opts<GlobalOptions>().json
    if (error instanceof CommanderError) {
      // Commander already told people on stderr; scripts asked for one JSON document.
      if (json && outcome.exitCode !== EXIT.ok) {
        io.stdout(`${JSON.stringify({ error: { code: 'USAGE', message: error.message } })}\n`)
      }
      return outcome.exitCode
    }
    const cliError =
      error instanceof CliError
        ? error
        : new CliError(
            `Unexpected problem: ${error instanceof Error ? error.message : String(error)}`,
          )
    if (json && !cliError.printed) {
      io.stdout(
        `${JSON.stringify({ error: { code: cliError.code, message: cliError.message } })}\n`,
      )
    }
    io.stderr(`atelier: ${cliError.message}\n`)
    return cliError.exitCode
  }
}
