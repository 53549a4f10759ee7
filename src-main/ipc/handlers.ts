import type { BackendInfo } from '../../src-shared/domain/app'
import { APP_NAME, APP_VERSION } from '../app/version'
import type { IpcHandlers } from './dispatch'

/** What the handlers need from the host: the Electron shell and the browser mode differ here. */
export interface HandlerDeps {
  openExternal: (url: string) => Promise<void>
  platform: string
  /** The service in use, as the window may see it (null while it starts or when it failed). */
  backend: () => BackendInfo | null
}

export function createHandlers(deps: HandlerDeps): IpcHandlers {
  return {
    'app.getInfo': (_args, context) => ({
      name: APP_NAME,
      version: APP_VERSION,
      shell: context.shell,
      platform: deps.platform,
      backend: deps.backend(),
    }),
    'app.openExternal': async ({ url }) => {
      await deps.openExternal(url)
      return null
    },
  }
}
