// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { FlowRunTotals } from '../../src-shared/domain/flow-run'
import { Toasts } from '../../src-renderer/src/shell/Toasts'
import {
  createAppStore,
  MAX_TOASTS,
  TOAST_LONG_MS,
  TOAST_MS,
  useAppStore,
  type AppStore,
} from '../../src-renderer/src/store'
import { found, idle, ShellMain, storedFlow, summary, SYNCING, u } from './shell-transport'

let main: ShellMain
let store: AppStore

beforeEach(() => {
  vi.useFakeTimers()
  main = new ShellMain([storedFlow(u(1), 'Harbour at dusk')])
  window.atelier = main.api
  store = createAppStore(() => main.api)
})

afterEach(() => {
  cleanup()
  vi.clearAllTimers()
  vi.useRealTimers()
  useAppStore.setState(useAppStore.getInitialState(), true)
  delete window.atelier
})

const titles = () => store.getState().toasts.map((toast) => toast.title)
/** Lets the answers of the transport double (promises) arrive, a bounded number of turns. */
async function settle() {
  for (let turn = 0; turn < 10; turn++) await vi.advanceTimersByTimeAsync(0)
}

describe('the toast list', () => {
  it('keeps at most a few, the oldest going first, each for its time', async () => {
    const { pushToast } = store.getState()
    pushToast({ title: 'One' })
    pushToast({ title: 'Two', tone: 'error', message: 'It broke.' })
    pushToast({ title: 'Three' })
    pushToast({ title: 'Four' })
    expect(titles()).toEqual(['Two', 'Three', 'Four'])
    expect(titles()).toHaveLength(MAX_TOASTS)

    await vi.advanceTimersByTimeAsync(TOAST_MS)
    // An error stays longer: there is something to read.
    expect(titles()).toEqual(['Two'])
    await vi.advanceTimersByTimeAsync(TOAST_LONG_MS - TOAST_MS)
    expect(titles()).toEqual([])
  })

  it('keeps one without a time until it is dismissed', async () => {
    const { pushToast, dismissToast } = store.getState()
    const id = pushToast({ title: 'Stays', durationMs: null })
    await vi.advanceTimersByTimeAsync(TOAST_LONG_MS * 10)
    expect(titles()).toEqual(['Stays'])
    dismissToast(id)
    expect(titles()).toEqual([])
  })

  it('shows each as a status, whose button does its action and dismisses it', () => {
    const retried: string[] = []
    render(createElement(Toasts))
    act(() => {
      useAppStore.getState().pushToast({
        tone: 'warning',
        title: 'The service cannot be reached',
        message: 'Atelier tries again by itself.',
        action: {
          label: 'Retry',
          run: () => {
            retried.push('now')
          },
        },
      })
      useAppStore.getState().pushToast({ title: 'Synced', message: '3 records new or changed.' })
    })
    const region = screen.getByRole('region', { name: 'Notifications' })
    const shown = within(region).getAllByRole('status')
    expect(shown.map((toast) => toast.textContent)).toEqual([
      expect.stringContaining('The service cannot be reached'),
      expect.stringContaining('Synced'),
    ])
    fireEvent.click(within(shown[0] as HTMLElement).getByRole('button', { name: 'Retry' }))
    expect(retried).toEqual(['now'])
    expect(within(region).getAllByRole('status')).toHaveLength(1)
    fireEvent.click(within(region).getByRole('button', { name: 'Dismiss' }))
    expect(within(region).queryAllByRole('status')).toHaveLength(0)
  })
})

describe('background results', () => {
  const connect = async () => {
    const off = store.getState().connectBackground()
    await settle()
    return off
  }

  it('tells what a sync brought, once, and reads the balance again', async () => {
    main.searchItems = [found('run', 1, 'an old run', '2026-03-01T09:00:00Z')]
    await connect()
    expect(main.callsTo('account.summary')).toHaveLength(1)
    main.searchItems.push(
      found('run', 2, 'a lighthouse in fog', '2026-03-02T09:00:00Z'),
      found('run', 3, 'a kite over dunes', '2026-03-02T09:01:00Z'),
      found('asset', 4, 'dunes.png', '2026-03-02T09:02:00Z'),
    )
    main.emit('sync.status', SYNCING)
    // The summary counts the lists read whole too: the toast goes by what is new in the mirror.
    main.emit('sync.status', idle(summary({ finishedAt: 2_000, fetched: 70, deleted: 2 })))
    await settle()
    expect(store.getState().toasts).toEqual([
      expect.objectContaining({
        tone: 'success',
        title: 'Synced',
        message: '2 new runs, 1 new asset, 2 records removed.',
      }),
    ])
    expect(main.callsTo('account.summary')).toHaveLength(2)

    // The same status again (told twice), then a sync that brought nothing new: nothing to tell.
    main.emit('sync.status', idle(summary({ finishedAt: 2_000, fetched: 70, deleted: 2 })))
    main.emit('sync.status', SYNCING)
    main.emit('sync.status', idle(summary({ finishedAt: 3_000, fetched: 63 })))
    await settle()
    expect(titles()).toEqual(['Synced'])
    expect(main.callsTo('account.summary')).toHaveLength(3)
  })

  it('does not tell a sync that ended before the window listened', async () => {
    await connect()
    main.emit('sync.status', idle(summary({ finishedAt: 2_000, fetched: 500 })))
    await settle()
    expect(titles()).toEqual([])
    // Yet the balance it may have changed is read again.
    expect(main.callsTo('account.summary')).toHaveLength(2)
  })

  it('tells going offline once, with a retry, and coming back', async () => {
    await connect()
    main.emit('sync.status', idle(summary({ finishedAt: 2_000 })))
    const offline = (finishedAt: number) => ({
      ...idle(summary({ finishedAt, outcome: 'offline', code: 'NETWORK_ERROR', message: 'x' })),
      state: 'offline' as const,
    })
    main.emit('sync.status', SYNCING)
    main.emit('sync.status', offline(3_000))
    main.emit('sync.status', SYNCING)
    main.emit('sync.status', offline(4_000))
    await settle()
    expect(store.getState().toasts).toEqual([
      expect.objectContaining({ tone: 'warning', title: 'The service cannot be reached' }),
    ])
    store.getState().toasts[0]?.action?.run()
    await settle()
    expect(main.callsTo('sync.start')).toHaveLength(1)

    main.emit('sync.status', SYNCING)
    main.emit('sync.status', idle(summary({ finishedAt: 5_000 })))
    await settle()
    expect(titles()).toEqual(['The service cannot be reached', 'Back online: synced'])
  })

  it('says a refused key is not valid, and its button opens Settings', async () => {
    await connect()
    main.emit('sync.status', SYNCING)
    main.emit('sync.status', {
      ...idle(summary({ outcome: 'unauthorized', code: 'UNAUTHORIZED', message: 'refused' })),
      state: 'unauthorized',
    })
    await settle()
    const [toast] = store.getState().toasts
    expect(toast).toMatchObject({
      tone: 'error',
      title: 'The API key is not valid',
      message: 'Add it again in Settings.',
      action: { label: 'Open Settings' },
    })
    toast?.action?.run()
    expect(store.getState().section).toBe('settings')
  })

  const totals: FlowRunTotals = {
    nodes: 2,
    dispatched: 2,
    cached: 0,
    skipped: 0,
    failed: 1,
    canceled: 0,
    estimateMicro: 50_000,
    costMicro: 40_000,
  }

  it('tells a flow run that ended out of view, with its cost, and opens its flow', async () => {
    await connect()
    await store.getState().loadFlows()
    store.getState().goTo('runs')
    main.emit('flowRuns.event', {
      flowRunId: 'fr-1',
      event: {
        type: 'flow-started',
        flowRunId: 'fr-1',
        flowId: u(1),
        resumed: false,
        estimateMicro: 50_000,
        estimateByNode: {},
      },
    })
    main.emit('flowRuns.event', {
      flowRunId: 'fr-1',
      event: { type: 'flow-finished', flowRunId: 'fr-1', state: 'failed', totals, outputs: {} },
    })
    await settle()
    expect(store.getState().toasts).toEqual([
      expect.objectContaining({
        tone: 'error',
        title: '“Harbour at dusk” failed',
        message: 'Cost 0.0400 credits · 1 node failed',
        action: expect.objectContaining({ label: 'Open flow' }),
      }),
    ])
    // The balance after a run comes from the main process (`account.changed`, after each
    // charge): the window does not ask for it again when the flow run ends.
    expect(main.callsTo('account.summary')).toHaveLength(1)

    store.getState().toasts[0]?.action?.run()
    await settle()
    expect(store.getState().section).toBe('flows')
    expect(main.callsTo('flows.get')).toEqual([{ id: u(1) }])
    expect(store.getState().editor?.name).toBe('Harbour at dusk')
  })

  it('leaves a run shown in its editor to the editor', async () => {
    await connect()
    store.setState({
      section: 'flows',
      run: {
        flowRunId: 'fr-2',
        state: 'running',
        estimateMicro: null,
        totals: null,
        outputs: null,
      },
    })
    main.emit('flowRuns.event', {
      flowRunId: 'fr-2',
      event: { type: 'flow-finished', flowRunId: 'fr-2', state: 'succeeded', totals, outputs: {} },
    })
    await settle()
    expect(titles()).toEqual([])
    // Another run, whose editor is not the one open, is told.
    main.emit('flowRuns.event', {
      flowRunId: 'fr-3',
      event: { type: 'flow-finished', flowRunId: 'fr-3', state: 'canceled', totals, outputs: {} },
    })
    expect(titles()).toEqual(['A flow run was canceled'])
  })

  it('passes info notices by as toasts, and leaves warnings to the banner', async () => {
    await connect()
    const offSync = store.getState().connectSync()
    main.emit('app.notice', { level: 'info', message: 'The media cache was trimmed to 2 GiB.' })
    main.emit('app.notice', { level: 'warning', message: 'The mirror was damaged and rebuilt.' })
    expect(titles()).toEqual(['The media cache was trimmed to 2 GiB.'])
    expect(store.getState().notices.map((notice) => notice.level)).toEqual(['info', 'warning'])
    offSync()
  })

  it('stops listening when disconnected', async () => {
    const off = await connect()
    expect(main.listenerCount('sync.status')).toBe(1)
    off()
    expect(main.listenerCount('sync.status')).toBe(0)
    expect(main.listenerCount('flowRuns.event')).toBe(0)
    expect(main.listenerCount('app.notice')).toBe(0)
  })
})
