import { InvalidArgumentError, type Command } from 'commander'
import { isSecretsError } from '../../secrets/errors'
import { isServiceError } from '../../service/errors'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'
import { BROWSER_ENV, openBrowser } from '../../web/open-browser'
import type { WebServer } from '../../web'

/** A stop signal this long after the first is the user insisting, not the same stop twice. */
const REPEATED_STOP_MS = 1000

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
    .option(
      '--open',
      `also open the link in the system browser (${BROWSER_ENV}=none: never; ${BROWSER_ENV}=<program>: that one)`,
      false,
    )
    .action(async (flags: { port: number; open: boolean }) => {
      const globals = context.globals()
      // The signal handlers go in first, so that a stop at any moment closes the databases:
      // one asked for while the app starts (the first renderer build takes seconds) closes it
      // as soon as it is up, and no link is printed. They stay until everything is closed: a
      // Ctrl-C reaches every process of the terminal's group and `npm start` forwards it too,
      // so one stop often arrives twice at once. Only a second one a while later (the user
      // pressing again because closing hangs) leaves at once.
      let server: WebServer | undefined
      let firstStopAt: number | undefined
      let closing: Promise<void> | undefined
      let closed = () => {}
      const stopped = new Promise<void>((resolve) => {
        closed = resolve
      })
      const close = (running: WebServer) => {
        closing ??= running
          .close()
          .catch(() => undefined)
          .then(() => {
            closed()
          })
      }
      const stop = () => {
        const now = Date.now()
        if (firstStopAt === undefined) firstStopAt = now
        else if (now - firstStopAt >= REPEATED_STOP_MS) {
          context.io.stderr('atelier: stopped at once, before its databases were closed.\n')
          process.exit(EXIT.failed)
        }
        if (server) close(server)
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
      try {
        // Loaded here so that other commands do not pay for the server, the sandbox and Vite.
        const { startWebServer } = await import('../../web')
        const running = await startWebServer({
          home: globals.home,
          port: flags.port,
          host: '127.0.0.1',
          logLevel: globals.logLevel,
          ...(globals.profile === undefined ? {} : { profile: globals.profile }),
        }).catch((error: unknown) => {
          throw cliError(error, flags.port)
        })
        server = running
        if (firstStopAt !== undefined) {
          close(running)
          await stopped
          return
        }
        // Exactly one line: a script waits for it to know the app is being served.
        context.print({ url: running.url }, running.url)
        // Services that cannot start (a profile the keychain or the service refuses) end the
        // command as a failure at the start would have, after the link was already out.
        let failure: unknown
        running.ready.catch((error: unknown) => {
          failure = cliError(error, flags.port)
          close(running)
        })
        if (flags.open) {
          // After the line, and on stderr if anything: stdout stays that one line.
          void openBrowser(running.url, {
            onProblem: (message) => {
              context.io.stderr(`${message}\n`)
            },
          })
        }
        await stopped
        if (failure !== undefined) {
          throw failure instanceof Error ? failure : new Error(JSON.stringify(failure))
        }
      } finally {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
      }
    })
}
