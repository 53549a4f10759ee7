import { InvalidArgumentError, type Command } from 'commander'
import { isSecretsError } from '../../secrets'
import { isServiceError } from '../../service'
import { EXIT } from '../exit-codes'
import { CliError, type CommandContext } from '../program'

function port(value: string): number {
  const parsed = Number(value)
  if (!/^\d+$/.test(value) || !Number.isInteger(parsed) || parsed > 65535) {
    throw new InvalidArgumentError(
      '--port must be a whole number from 0 to 65535 (0 picks a free one).',
    )
  }
  return parsed
}

/** Profile, service and port problems, in the exit codes every command keeps to. */
function cliError(error: unknown, wanted: number): unknown {
  if ((error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE') {
    return new CliError(
      `Port ${wanted} is taken by another program. Pick another with --port, or leave --port out to get a free one.`,
      EXIT.failed,
      'PORT_IN_USE',
    )
  }
  if (isSecretsError(error)) {
    return new CliError(error.message, error.isInputError ? EXIT.usage : EXIT.failed, error.code)
  }
  if (isServiceError(error)) {
    return new CliError(
      `The service of this profile could not tell which organization its key belongs to: ${error.message}`,
      EXIT.failed,
      error.code,
    )
  }
  return error
}

export function registerWeb(program: Command, context: CommandContext): void {
  program
    .command('web')
    .description(
      'Open Atelier in a browser: serve the app on 127.0.0.1 and print its link (with a one-session token). Runs until Ctrl-C.',
    )
    .option('--port <n>', 'port to listen on (0 picks a free one)', port, 0)
    .action(async (flags: { port: number }) => {
      const globals = context.globals()
      // Loaded here so that other commands do not pay for the server, the sandbox and Vite.
      const { startWebServer } = await import('../../web')
      const server = await startWebServer({
        home: globals.home,
        port: flags.port,
        host: '127.0.0.1',
        logLevel: globals.logLevel,
        ...(globals.profile === undefined ? {} : { profile: globals.profile }),
      }).catch((error: unknown) => {
        throw cliError(error, flags.port)
      })
      // Signal handlers go in before the link is printed, so a stop right after it is never missed.
      const stopped = new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          void server
            .close()
            .catch(() => undefined)
            .then(done)
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
      // Exactly one line: a script waits for it to know the app is being served.
      context.print({ url: server.url }, server.url)
      await stopped
    })
}
