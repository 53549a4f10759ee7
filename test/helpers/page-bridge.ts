import type { Page } from 'playwright-core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import type { BackendInfo } from '../../src-shared/domain/app'
import { IPC_CHANNELS } from '../../src-shared/ipc'

/**
 * Gives the page a `window.atelier` whose every call runs the real main-process handlers in
 * this Node process, through the same `dispatchIpc` the Electron transport uses. Only the
 * Electron window itself is missing, which cannot run on this machine.
 */
export async function bridgeToMainProcess(
  page: Page,
  backend: () => BackendInfo | null = () => null,
): Promise<{ opened: string[] }> {
  const opened: string[] = []
  const handlers = createHandlers({
    platform: process.platform,
    backend,
    openExternal: (url) => {
      opened.push(url)
      return Promise.resolve()
    },
  })
  await page.exposeFunction('__atelierInvoke', (channel: string, args: unknown) =>
    dispatchIpc(handlers, channel, args, { shell: 'web' }),
  )
  await page.addInitScript((channels: readonly string[]) => {
    const invoke = (
      globalThis as unknown as { __atelierInvoke: (c: string, a: unknown) => unknown }
    ).__atelierInvoke
    const api: Record<string, Record<string, (args?: unknown) => unknown>> = {}
    for (const channel of channels) {
      const [domain = '', verb = ''] = channel.split('.')
      api[domain] ??= {}
      api[domain][verb] = (args?: unknown) => invoke(channel, args)
    }
    Object.assign(globalThis, { atelier: { ...api, on: () => () => undefined } })
  }, IPC_CHANNELS)
  return { opened }
}
