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
