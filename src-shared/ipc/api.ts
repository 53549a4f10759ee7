import type { IpcArgs, IpcChannel, IpcValue } from './contract'
import type { IpcEventName, IpcEvents } from './events'
import type { IpcResult } from './result'

type DomainOf<C extends string> = C extends `${infer D}.${string}` ? D : never
type VerbOf<C extends string, D extends string> = C extends `${D}.${infer V}` ? V : never

type Call<C extends IpcChannel> =
  undefined extends IpcArgs<C>
    ? () => Promise<IpcResult<IpcValue<C>>>
    : (args: IpcArgs<C>) => Promise<IpcResult<IpcValue<C>>>

/** The shape of `window.atelier`, derived from the contract so both ends cannot drift apart. */
export type AtelierApi = {
  [D in DomainOf<IpcChannel>]: {
    [V in VerbOf<IpcChannel, D>]: Call<Extract<`${D}.${V}`, IpcChannel>>
  }
} & {
  /** Subscribes to a pushed event; returns the function that unsubscribes. */
  on<E extends IpcEventName>(event: E, listener: (payload: IpcEvents[E]) => void): () => void
}

/**
 * What the desktop preload adds beside `window.atelier`, as `window.atelierFiles`: not a channel
 * (nothing crosses to the main process), one question about a `File` the page already holds.
 * A File with a path on disk only comes from the person's own gesture (a drop, a file input), so
 * the page learns where what was dropped lies and nothing else: it cannot name a path and get a
 * file. The browser mode has no such helper; there a dropped file has no path at all.
 */
export interface DroppedFiles {
  /**
   * The full path on this machine of a dropped file or folder; null for a File made in script,
   * or anything that is not a File.
   */
  pathOf(file: File): string | null
}
