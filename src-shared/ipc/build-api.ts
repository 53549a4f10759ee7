import type { AtelierApi } from './api'
import { IPC_CHANNELS } from './channels'
import type { IpcResult } from './result'

type Call = (channel: string, args: unknown) => Promise<IpcResult<unknown>>
type On = AtelierApi['on']

/**
 * `window.atelier` from the channel list: each `<domain>.<verb>` becomes
 * `api.<domain>.<verb>(args)` calling `call`. The Electron preload and the browser bridge build
 * it the same way, so a channel added to the contract needs no edit in either; zod-free.
 */
export function buildApi(call: Call, on: On): AtelierApi {
  const api: Record<string, unknown> = {}
  for (const channel of IPC_CHANNELS) {
    const [domain = '', verb = ''] = channel.split('.')
    const calls = (api[domain] ?? {}) as Record<string, (args?: unknown) => unknown>
    calls[verb] = (args?: unknown) => call(channel, args)
    api[domain] = calls
  }
  api.on = on
  for (const value of Object.values(api)) Object.freeze(value)
  // The cast holds because IPC_CHANNELS lists every channel of the contract (a compile-time test
  // checks it) and each `<domain>.<verb>` became `api.<domain>.<verb>`, which is AtelierApi.
  return Object.freeze(api) as unknown as AtelierApi
}
