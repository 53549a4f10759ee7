import type { Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import type { IpcArgs, IpcChannel, IpcError, IpcValue } from '../../src-shared/ipc'

/**
 * The channels as the window reaches them: the real dispatcher and handlers over the core the
 * test opened (asked at each call, so the test may open it after making these).
 */
export function ipcCalls(core: () => Core) {
  const handlers = () =>
    createHandlers({
      platform: 'linux',
      backend: () => null,
      openExternal: () => Promise.resolve(),
      core,
    })
  const call = <C extends IpcChannel>(channel: C, args: IpcArgs<C>) =>
    dispatchIpc(handlers(), channel, args, { shell: 'web' })
  /** The channel's value; an error answer fails the test with its code and message. */
  const ok = async <C extends IpcChannel>(channel: C, args: IpcArgs<C>): Promise<IpcValue<C>> => {
    const result = await call(channel, args)
    if (!result.ok) throw new Error(`${channel}: ${result.error.code}: ${result.error.message}`)
    return result.value as IpcValue<C>
  }
  /** The channel's error; a value answer fails the test. */
  const fails = async <C extends IpcChannel>(channel: C, args: IpcArgs<C>): Promise<IpcError> => {
    const result = await call(channel, args)
    if (result.ok) throw new Error(`${channel} answered ${JSON.stringify(result.value)}`)
    return result.error
  }
  return { call, ok, fails }
}
