import { spawn } from 'node:child_process'
import type { Logger } from '../log'

/**
 * What Electron's `shell.openExternal` does, for the browser mode: the system's opener, given the
 * URL as an argument (never through a shell). The caller has checked it is an http(s) link.
 */
export function systemOpener(logger: Logger): (url: string) => Promise<void> {
  const [command, ...prefix] =
    process.platform === 'darwin'
      ? ['open']
      : process.platform === 'win32'
        ? ['rundll32', 'url.dll,FileProtocolHandler']
        : ['xdg-open']
  return (url) =>
    new Promise((resolve) => {
      const child = spawn(command, [...prefix, url], {
        detached: true,
        stdio: 'ignore',
      })
      // A machine with no opener (a server, a container) is told in the log, not in the page.
      child.once('error', (error) => {
        logger.warn('a link could not be opened: the system has no program to open it with', {
          err: error,
        })
        resolve()
      })
      child.once('spawn', () => {
        child.unref()
        resolve()
      })
    })
}
