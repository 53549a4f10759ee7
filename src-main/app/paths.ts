import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * Where Atelier keeps its data when no `--home` is given: the same folder Electron's
 * `app.getPath('userData')` picks for an app named Atelier, so the CLI and the desktop app
 * share one mirror.
 */
export function defaultHome(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (platform === 'win32') {
    return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Atelier')
  }
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Atelier')
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'Atelier')
}

/** The local sandbox's data, under the app's home: what `sandbox.reset` wipes, and nothing else. */
export const SANDBOX_DIR = 'sandbox'

export function sandboxDir(home: string): string {
  return join(home, SANDBOX_DIR)
}
