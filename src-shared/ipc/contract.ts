import { z } from 'zod'
import type { AppInfo } from '../domain/app'
import { searchQuerySchema, type SearchResult } from '../domain/search'
import type { SyncStatus } from '../domain/sync'

/**
 * One entry per IPC channel: the zod schema of its single argument and, as a phantom type,
 * what it answers. Channel names are `<domain>.<verb>`; the preload turns them into
 * `window.atelier.<domain>.<verb>(args)`.
 */
interface ChannelContract<Args extends z.ZodType, Result> {
  args: Args
  /** Never read at run time: carries the result type to both ends. */
  result: Result
}

function channel<Result>() {
  return <Args extends z.ZodType>(args: Args): ChannelContract<Args, Result> => ({
    args,
    result: undefined as Result,
  })
}

const noArgs = z.undefined()

export const ipcContract = {
  'app.getInfo': channel<AppInfo>()(noArgs),
  'app.openExternal': channel<null>()(
    z.strictObject({
      url: z
        .url({ protocol: /^https?$/, error: 'Only http and https links can be opened.' })
        .max(2048),
    }),
  ),
  'sync.getStatus': channel<SyncStatus>()(noArgs),
  /** Starts a sync, or joins the running one; answers once it has ended. */
  'sync.start': channel<SyncStatus>()(noArgs),
  /** Offline search of the mirror: ranked with words, a filtered list without. */
  'search.query': channel<SearchResult>()(searchQuerySchema),
} as const

export type IpcContract = typeof ipcContract
export type IpcChannel = keyof IpcContract
export type IpcArgs<C extends IpcChannel> = z.input<IpcContract[C]['args']>
export type IpcParsedArgs<C extends IpcChannel> = z.output<IpcContract[C]['args']>
export type IpcValue<C extends IpcChannel> = IpcContract[C]['result']
