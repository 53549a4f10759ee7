import { describe, expectTypeOf, it } from 'vitest'
import type { IpcHandlers } from '../../src-main/ipc'
import { createHandlers } from '../../src-main/ipc'
import { IPC_CHANNELS, ipcContract, type AtelierApi, type IpcChannel } from '../../src-shared/ipc'

type Listed = (typeof IPC_CHANNELS)[number]
type DomainOf<C extends string> = C extends `${infer D}.${string}` ? D : never

describe('the IPC contract, at compile time', () => {
  it('lists every channel of the contract, and only those', () => {
    expectTypeOf<Listed>().toEqualTypeOf<IpcChannel>()
    expectTypeOf<keyof typeof ipcContract>().toEqualTypeOf<Listed>()
  })

  it('has a handler for every channel, and no handler without a channel', () => {
    expectTypeOf<keyof IpcHandlers>().toEqualTypeOf<IpcChannel>()
    expectTypeOf<keyof ReturnType<typeof createHandlers>>().toEqualTypeOf<IpcChannel>()
  })

  it('gives the renderer one domain per channel prefix, each call answering an IpcResult', () => {
    expectTypeOf<Exclude<keyof AtelierApi, 'on'>>().toEqualTypeOf<DomainOf<IpcChannel>>()
    expectTypeOf<ReturnType<AtelierApi['app']['getInfo']>>().resolves.toHaveProperty('ok')
    expectTypeOf<AtelierApi['app']['openExternal']>().parameter(0).toEqualTypeOf<{ url: string }>()
  })
})
