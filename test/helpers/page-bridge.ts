import type { Page } from 'playwright-core'
import type { Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import type { BackendInfo } from '../../src-shared/domain/app'
import { IPC_CHANNELS, IPC_EVENTS } from '../../src-shared/ipc'

export interface BridgeOptions {
  /** The app's core, run for real in this process: its channels answer, its events reach the page. */
  core?: Core
}

/**
 * Gives the page a `window.atelier` whose every call runs the real main-process handlers in
 * this Node process, through the same `dispatchIpc` the Electron transport uses, and whose `on`
 * receives the core's events as the preload would. Only the Electron window itself is missing,
 * which cannot run on this machine.
 */
export async function bridgeToMainProcess(
  page: Page,
  backend: () => BackendInfo | null = () => null,
  options: BridgeOptions = {},
): Promise<{ opened: string[] }> {
  const opened: string[] = []
  const { core } = options
  const handlers = createHandlers({
    platform: process.platform,
    backend,
    openExternal: (url) => {
      opened.push(url)
      return Promise.resolve()
    },
    ...(core ? { core: () => core } : {}),
  })
  await page.exposeFunction('__atelierInvoke', (channel: string, args: unknown) =>
    dispatchIpc(handlers, channel, args, { shell: 'web' }),
  )
  await page.addInitScript(
    ([channels, events]: [readonly string[], readonly string[]]) => {
      const invoke = (
        globalThis as unknown as { __atelierInvoke: (c: string, a: unknown) => unknown }
      ).__atelierInvoke
      const api: Record<string, Record<string, (args?: unknown) => unknown>> = {}
      for (const channel of channels) {
        const [domain = '', verb = ''] = channel.split('.')
        api[domain] ??= {}
        api[domain][verb] = (args?: unknown) => invoke(channel, args)
      }
      const listeners = new Map<string, Set<(payload: unknown) => void>>()
      const on = (event: string, listener: (payload: unknown) => void) => {
        if (!events.includes(event)) return () => undefined
        const set = listeners.get(event) ?? new Set()
        listeners.set(event, set)
        set.add(listener)
        return () => {
          set.delete(listener)
        }
      }
      // Called from Node with each pushed event, as ipcRenderer.on would deliver it.
      const emit = (event: string, payload: unknown) => {
        for (const listener of listeners.get(event) ?? []) listener(payload)
      }
      Object.assign(globalThis, { atelier: { ...api, on }, __atelierEmit: emit })
    },
    [IPC_CHANNELS, IPC_EVENTS] as [readonly string[], readonly string[]],
  )
  if (core) {
    const unsubscribe = core.onEvent((event, payload) => {
      // Events sent while the page loads or after it closed are lost, as in the window.
      page
        .evaluate(
          ([name, value]) => {
            const target = globalThis as unknown as {
              __atelierEmit?: (event: string, payload: unknown) => void
            }
            target.__atelierEmit?.(name, value)
          },
          [event, payload] as [string, unknown],
        )
        .catch(() => undefined)
    })
    page.once('close', unsubscribe)
  }
  return { opened }
}
