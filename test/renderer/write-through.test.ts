// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest'
import type { AccountSummary } from '../../src-shared/domain/app'
import type { EvaluationListPage } from '../../src-shared/domain/evaluations'
import type { RunListPage, RunListRow } from '../../src-shared/domain/runs-list'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import { createAppStore } from '../../src-renderer/src/store'
import { idle, ShellMain, summary, SYNCING, u } from './shell-transport'

/**
 * The views' side of write-through, over the app's own store: the change events main pushes
 * (`mirror.changed`, `account.changed`) are heard without a sync, and an answer asked for before
 * a change never hides it. Only the IPC transport is doubled.
 */

function row(n: number): RunListRow {
  return {
    id: u(2000 + n),
    status: 'succeeded',
    target: 'model',
    name: 'Atelier Text to Image',
    model: 'atelier/text-to-image',
    flowId: null,
    createdMs: 1_000_000 + n,
    durationMs: 1200,
    cost: '0.0200',
    text: `a red kite ${String(n)}`,
    hasOutputs: true,
    failure: null,
  }
}

const summaryOf = (balanceMicro: number): AccountSummary => ({
  profileName: null,
  organization: { id: u(77), name: 'Nordlys Studio' },
  balanceMicro,
  backendKind: 'sandbox',
})

/** An answer held back until the test lets it go. */
function held() {
  let release: () => void = () => undefined
  const promise = new Promise<undefined>((resolve) => {
    release = () => {
      resolve(undefined)
    }
  })
  return { promise, release }
}

/** The doubled main process: runs and evaluations from memory, each answer as the "mirror" was when asked. */
class Main {
  readonly shell = new ShellMain()
  runs: RunListRow[] = []
  /** When set, the next `runs.list` answers only once released, with what was there when asked. */
  holdNextList: ReturnType<typeof held> | null = null
  evaluationLists = 0

  readonly api: AtelierApi = {
    ...this.shell.api,
    runs: {
      ...this.shell.api.runs,
      list: async () => {
        const page: RunListPage = {
          items: structuredClone(this.runs),
          next: null,
          total: { count: this.runs.length, more: false },
        }
        const wait = this.holdNextList
        this.holdNextList = null
        if (wait) await wait.promise
        return { ok: true, value: page } satisfies IpcResult<RunListPage>
      },
      filterOptions: () => Promise.resolve({ ok: true, value: { models: [], flows: [] } }),
    },
    evaluations: {
      ...this.shell.api.evaluations,
      list: () => {
        this.evaluationLists++
        const page: EvaluationListPage = { mode: 'list', items: [], next: null }
        return Promise.resolve({ ok: true, value: page })
      },
    },
  }
}

const runIds = (store: ReturnType<typeof createAppStore>) =>
  (store.getState().runRows ?? []).map((r) => r.id)

describe('write-through in the views', () => {
  it('the runs list reads again when main says runs changed, with no sync', async () => {
    const main = new Main()
    const store = createAppStore(() => main.api)
    await store.getState().loadRuns()
    expect(store.getState().runRows).toEqual([])
    main.runs = [row(1), row(0)]
    main.shell.emit('mirror.changed', { collections: ['runs'] })
    await vi.waitFor(() => {
      expect(runIds(store)).toEqual([row(1).id, row(0).id])
    })
    expect(store.getState().runsTotal).toEqual({ count: 2, more: false })
    // Another list's change leaves the runs alone.
    main.runs = [row(2), row(1), row(0)]
    main.shell.emit('mirror.changed', { collections: ['evaluations'] })
    await Promise.resolve()
    expect(runIds(store)).toHaveLength(2)
  })

  it('a first page asked during the first sync does not stay "0 runs" once the sync wrote them', async () => {
    const main = new Main()
    const store = createAppStore(() => main.api)
    const first = held()
    main.holdNextList = first
    // The first visit asks while the first sync runs and the mirror is still empty…
    const loading = store.getState().loadRuns()
    main.shell.emit('sync.status', SYNCING)
    // …the sync writes the runs and ends before that answer comes back.
    main.runs = [row(0)]
    main.shell.emit('sync.status', idle(summary({ finishedAt: 2_000 })))
    first.release()
    await loading
    await vi.waitFor(() => {
      expect(runIds(store)).toEqual([row(0).id])
    })
    expect(store.getState().runsTotal).toEqual({ count: 1, more: false })
    expect(store.getState().runsLoading).toBeNull()
  })

  it('a first page asked before the app wrote its runs is asked again', async () => {
    const main = new Main()
    const store = createAppStore(() => main.api)
    const first = held()
    main.holdNextList = first
    const loading = store.getState().loadRuns()
    main.runs = [row(0)]
    main.shell.emit('mirror.changed', { collections: ['runs'] })
    first.release()
    await loading
    await vi.waitFor(() => {
      expect(runIds(store)).toEqual([row(0).id])
    })
  })

  it('the balance main pushes after a charge is the one shown, over an older answer', async () => {
    const main = new Main()
    const store = createAppStore(() => main.api)
    main.shell.account = { ok: true, value: summaryOf(1_000_000_000) }
    await store.getState().loadAccount()
    expect(store.getState().account?.balanceMicro).toBe(1_000_000_000)
    const asked = main.shell.callsTo('account.summary').length

    // An ask still on its way when the charge is told answers with the old balance: dropped.
    const late = store.getState().loadAccount()
    main.shell.emit('account.changed', summaryOf(999_979_500))
    await late
    expect(store.getState().account?.balanceMicro).toBe(999_979_500)
    // Told, not asked: no second request for it.
    expect(main.shell.callsTo('account.summary')).toHaveLength(asked + 1)
  })

  it('the evaluation list reads again when main says evaluations changed, once it was shown', async () => {
    const main = new Main()
    const store = createAppStore(() => main.api)
    await store.getState().loadEvaluations()
    expect(main.evaluationLists).toBe(1)
    main.shell.emit('mirror.changed', { collections: ['runs'] })
    expect(main.evaluationLists).toBe(1)
    main.shell.emit('mirror.changed', { collections: ['evaluations', 'assets'] })
    await vi.waitFor(() => {
      expect(main.evaluationLists).toBe(2)
    })
  })
})
