import { spawn } from 'node:child_process'

/**
 * The variable that picks the browser `atelier web --open` (and so `npm start` in the browser
 * mode) opens the link in, after the convention of create-react-app and many other tools:
 * `none` opens nothing (tests, CI, a server), any other value is the program to run with the
 * link as its one argument, and without it the system's opener is used.
 */
export const BROWSER_ENV = 'BROWSER'

/** What `openBrowser` did: started a program, was told not to, or found none to start. */
export type OpenBrowserOutcome = 'started' | 'skipped' | 'failed'

export interface OpenBrowserOptions {
  env?: NodeJS.ProcessEnv
  platform?: NodeJS.Platform
  /** Told, in one sentence, when no program could open the link. Never thrown. */
  onProblem?: (message: string) => void
}

/**
 * The program and its arguments before the link. The system's openers are the ones the
 * desktop app's `shell.openExternal` stand-in uses (`open-external.ts`); on Windows that is
 * `rundll32 url.dll,FileProtocolHandler` rather than `cmd /c start`, so the link never goes
 * through a shell that would read its `&` or `^`.
 */
export function browserCommand(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string[] | undefined {
  const chosen = env[BROWSER_ENV]?.trim()
  if (chosen !== undefined && chosen !== '') {
    return chosen.toLowerCase() === 'none' ? undefined : [chosen]
  }
  if (platform === 'darwin') return ['open']
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler']
  return ['xdg-open']
}

/**
 * Opens `url` in the system browser, detached from this process: it neither waits for the
 * browser nor fails when there is none (a server, a container, an opener that exits with an
 * error); `onProblem` is told instead, and the printed link is the way in.
 */
export function openBrowser(
  url: string,
  options: OpenBrowserOptions = {},
): Promise<OpenBrowserOutcome> {
  const { env = process.env, platform = process.platform, onProblem = () => undefined } = options
  const command = browserCommand(env, platform)
  if (command === undefined) return Promise.resolve('skipped')
  const [program = '', ...prefix] = command
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(program, [...prefix, url], { detached: true, stdio: 'ignore', env })
    } catch (error) {
      onProblem(
        `No browser was opened (${program}: ${(error as Error).message}); open the link above.`,
      )
      resolve('failed')
      return
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'ENOENT' ? `${program} is not installed` : `${program}: ${error.message}`
      onProblem(`No browser was opened (${why}); open the link above.`)
      resolve('failed')
    })
    child.once('spawn', () => {
      // An opener that starts but cannot find a browser says so with its exit code, later.
      child.once('exit', (code) => {
        if (code !== null && code !== 0) {
          onProblem(
            `${program} exited with code ${code}; if no browser opened, open the link above.`,
          )
        }
      })
      child.unref()
      resolve('started')
    })
  })
}
