import { describe, expect, it } from 'vitest'
import { createHandlers, dispatchIpc, IpcHandlerError, type IpcHandlers } from '../../src-main/ipc'
import { IPC_CHANNELS, ipcContract } from '../../src-shared/ipc'

/** The real handlers, with the host's side effects recorded instead of performed. */
function recordingHandlers() {
  const opened: string[] = []
  const handlers = createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: (url) => {
      opened.push(url)
      return Promise.resolve()
    },
  })
  const reached: string[] = []
  const counted = Object.fromEntries(
    Object.entries(handlers).map(([channel, handler]) => [
      channel,
      (...args: unknown[]) => {
        reached.push(channel)
        return (handler as (...a: unknown[]) => unknown)(...args)
      },
    ]),
  ) as unknown as IpcHandlers
  return { handlers: counted, reached, opened }
}

const web = { shell: 'web' } as const

describe('dispatchIpc', () => {
  it('keeps the channel list, the contract and the handlers in step at run time too', () => {
    const { handlers } = recordingHandlers()
    expect([...IPC_CHANNELS].sort()).toEqual(Object.keys(ipcContract).sort())
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(ipcContract).sort())
  })

  it.each([
    ['a javascript: URL', { url: 'javascript:alert(1)' }],
    ['a file: URL', { url: 'file:///etc/passwd' }],
    ['not a URL', { url: 'not a url' }],
    ['a missing url', {}],
    ['an extra field', { url: 'https://example.com', extra: true }],
    ['a string instead of an object', 'https://example.com'],
    ['no arguments at all', undefined],
  ])('answers INVALID_ARGUMENT for %s and never reaches the handler', async (_label, args) => {
    const { handlers, reached, opened } = recordingHandlers()
    const result = await dispatchIpc(handlers, 'app.openExternal', args, web)
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.error.code).toBe('INVALID_ARGUMENT')
    expect(result.error.message).toMatch(/app\.openExternal/)
    expect(result.error.issues?.length).toBeGreaterThan(0)
    expect(reached).toEqual([])
    expect(opened).toEqual([])
  })

  it('rejects arguments on a channel that takes none', async () => {
    const { handlers, reached } = recordingHandlers()
    const result = await dispatchIpc(handlers, 'app.getInfo', { surprise: 1 }, web)
    expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    expect(reached).toEqual([])
  })

  it('runs a valid call and answers its value', async () => {
    const { handlers, reached, opened } = recordingHandlers()
    const info = await dispatchIpc(handlers, 'app.getInfo', undefined, web)
    expect(info).toMatchObject({ ok: true, value: { name: 'Atelier', shell: 'web' } })
    const open = await dispatchIpc(
      handlers,
      'app.openExternal',
      { url: 'https://example.com/a' },
      web,
    )
    expect(open).toEqual({ ok: true, value: null })
    expect(opened).toEqual(['https://example.com/a'])
    expect(reached).toEqual(['app.getInfo', 'app.openExternal'])
  })

  it('answers UNKNOWN_CHANNEL for a channel that is not in the contract, including inherited names', async () => {
    const { handlers, reached } = recordingHandlers()
    for (const channel of ['app.deleteEverything', 'toString', '__proto__', '']) {
      const result = await dispatchIpc(handlers, channel, undefined, web)
      expect(result).toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } })
    }
    expect(reached).toEqual([])
  })

  it('passes a coded handler error through and hides an unexpected one', async () => {
    const failing = (error: Error): IpcHandlers => ({
      ...createHandlers({
        platform: 'linux',
        backend: () => null,
        openExternal: () => Promise.reject(error),
      }),
    })
    const coded = await dispatchIpc(
      failing(new IpcHandlerError('NOT_FOUND', 'No such run.')),
      'app.openExternal',
      { url: 'https://example.com' },
      web,
    )
    expect(coded).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'No such run.' } })

    const seen: unknown[] = []
    const hidden = await dispatchIpc(
      failing(new Error('ENOENT: /home/someone/secret-key-file')),
      'app.openExternal',
      { url: 'https://example.com' },
      web,
      (_channel, error) => seen.push(error),
    )
    expect(hidden).toMatchObject({ ok: false, error: { code: 'INTERNAL' } })
    expect(JSON.stringify(hidden)).not.toContain('secret-key-file')
    expect(seen).toHaveLength(1)
  })
})
