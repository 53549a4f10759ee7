import type { IpcResult } from '../../src-shared/ipc'
import { isSafeExternalUrl } from '../app/policy'
import { createHandlers, dispatchIpc, type IpcCallContext } from '../ipc'
import { openLogger } from '../log'
import { createSettingsService } from '../settings'
import { CoreHost } from '../workspace'
import type { ThreadData } from './protocol'

/**
 * A window's first screen goes first: its calls and the sync's share this thread (and the
 * embedded sandbox's), so the sync waits until the screen has most likely been drawn.
 */
const FIRST_SYNC_AFTER_MS = 1000

/** What only the main thread can do: Electron's shell and dialogs live there. */
export interface MainThreadDeps {
  /** Opens an http(s) link (checked here first, and again by the caller). */
  openExternal: (url: string) => Promise<void>
  /** The system's folder dialog; null when it was closed without a choice. */
  chooseFolder?: () => Promise<string | null>
}

export interface OpenedServices {
  host: CoreHost
  dispatch: (channel: string, args: unknown, context: IpcCallContext) => Promise<IpcResult<unknown>>
  close: () => Promise<void>
}

/**
 * The app's services in the calling thread: the log, the host with its backend and core, and
 * the handlers of every IPC channel. Throws what `CoreHost.open` throws (a profile the keychain
 * or the service refuses, when there is no fallback to the sandbox).
 */
export async function openServices(
  options: Omit<ThreadData, 'canChooseFolder'>,
  deps: MainThreadDeps,
): Promise<OpenedServices> {
  const { home, logLevel, profile, service, fallbackToSandbox } = options
  const logger = openLogger({
    home,
    ...(logLevel ? { level: logLevel } : {}),
    bindings: { process: 'services' },
  })
  const host = new CoreHost({
    home,
    logger,
    fallbackToSandbox,
    core: { firstSyncAfterMs: FIRST_SYNC_AFTER_MS },
    ...(profile === undefined ? {} : { profile }),
    ...(service === undefined ? {} : { service }),
  })
  try {
    await host.open()
  } catch (error) {
    await host.close().catch(() => undefined)
    logger.close()
    throw error
  }
  const handlers = createHandlers({
    platform: process.platform,
    backend: () => host.backend()?.info ?? null,
    openExternal: async (url) => {
      if (isSafeExternalUrl(url)) await deps.openExternal(url)
    },
    core: host.core,
    settings: createSettingsService({ host, logger }),
    ...(deps.chooseFolder ? { chooseFolder: deps.chooseFolder } : {}),
  })
  return {
    host,
    dispatch: (channel, args, context) =>
      dispatchIpc(handlers, channel, args, context, (name, error) => {
        logger.error(`the IPC call ${name} failed`, { err: error })
      }),
    close: async () => {
      await host.close().catch((error: unknown) => {
        logger.warn('the local services did not close cleanly', { err: error })
      })
      logger.close()
    },
  }
}
