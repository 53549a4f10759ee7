import { APP_NAME, APP_VERSION } from '../app/version'
import type { IpcHandlers } from './dispatch'

/** What the handlers need from the host: the Electron shell and the browser mode differ here. */
export interface HandlerDeps {
  openExternal: (url: string) => Promise<void>
  platform: string
}

export function createHandlers(deps: HandlerDeps): IpcHandlers {
  return {
    'app.getInfo': (_args, context) => ({
      name: APP_NAME,
      version: APP_VERSION,
      shell: context.shell,
      platform: deps.platform,
    }),
    'app.openExternal': async ({ url }) => {
      await deps.openExternal(url)
      return null
    },
  }
}
