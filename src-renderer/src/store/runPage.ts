import type { RunCallbackDelivery } from '../../../src-shared/api'
import type { RunDetail, SignatureCheck } from '../../../src-shared/domain/run-page'
import type { IpcArgs } from '../../../src-shared/ipc'
import type { IpcError, IpcResult } from '../../../src-shared/ipc/result'
import type { SliceWithApi } from './api'

/** One run as its page holds it: what the mirror gave, and how the last refresh went. */
export interface RunPageEntry {
  detail: RunDetail | null
  /** Reading the mirror (the first time) or asking the service. */
  loading: boolean
  refreshing: boolean
  /** Why nothing can be shown: the run is not on this computer and the service was not asked. */
  problem: IpcError | null
  /** Why what is shown may be old: the last refresh could not reach the service. */
  stale: { code: string; message: string } | null
  /** Log lines after the first page, read on demand. */
  moreLogsNext: string | null
}

export interface RunPageSlice {
  runPages: Record<string, RunPageEntry>
  /** Log levels hidden in every run's log (a filter, kept while moving between runs). */
  runPageHiddenLevels: string[]
  setRunPageHiddenLevels: (codes: string[]) => void
  /** The mirror's copy at once, then the service's (the page asks again while unfinished). */
  runPageLoad: (runId: string) => Promise<void>
  runPageRefresh: (runId: string) => Promise<void>
  runPageMoreLogs: (runId: string) => Promise<void>
  /** Each answers null when it worked, else the error (also shown as a toast). */
  runPageCancel: (runId: string) => Promise<IpcError | null>
  /** `seed`: keep the run's seed (the default: the same picture) or draw a new one. */
  runPageRerun: (
    runId: string,
    idempotencyKey: string,
    seed?: 'same' | 'new',
  ) => Promise<string | IpcError>
  runPageRedeliver: (runId: string) => Promise<IpcError | null>
  runPageVerify: (args: IpcArgs<'deliveries.verify'>) => Promise<SignatureCheck | IpcError>
}

const NOT_CONNECTED: IpcError = {
  code: 'DISCONNECTED',
  message: 'This page is not connected to Atelier, so runs cannot be shown here.',
}

const EMPTY: RunPageEntry = {
  detail: null,
  loading: false,
  refreshing: false,
  problem: null,
  stale: null,
  moreLogsNext: null,
}

/** Awaits a call; a transport that rejects (the window closing) reads as an error too. */
async function settle<T>(call: (() => Promise<IpcResult<T>>) | null): Promise<IpcResult<T>> {
  if (call === null) return { ok: false, error: NOT_CONNECTED }
  try {
    return await call()
  } catch {
    return { ok: false, error: { code: 'DISCONNECTED', message: NOT_CONNECTED.message } }
  }
}

export const createRunPageSlice: SliceWithApi<RunPageSlice> = (atelier) => (set, get) => {
  const entry = (runId: string): RunPageEntry => get().runPages[runId] ?? EMPTY
  const patch = (runId: string, change: Partial<RunPageEntry>) => {
    set((state) => ({
      runPages: { ...state.runPages, [runId]: { ...entry(runId), ...change } },
    }))
  }
  /** Keeps the log lines already read beyond the first page when the detail is replaced. */
  const withDetail = (runId: string, detail: RunDetail): Partial<RunPageEntry> => {
    const before = entry(runId)
    const extra = before.detail ? before.detail.logs.items.slice(detail.logs.items.length) : []
    const sameStart = before.detail?.logs.items[0]?.id === detail.logs.items[0]?.id
    if (!sameStart || extra.length === 0) {
      return { detail, moreLogsNext: detail.logs.next }
    }
    return {
      detail: { ...detail, logs: { items: [...detail.logs.items, ...extra], next: null } },
      moreLogsNext: before.moreLogsNext,
    }
  }
  const toast = (title: string, error: IpcError) => {
    get().pushToast({ tone: 'error', title, message: error.message })
  }

  const refresh = async (runId: string) => {
    if (entry(runId).refreshing) return
    patch(runId, { refreshing: true })
    const api = atelier()
    const result = await settle(api ? () => api.runs.refresh({ runId }) : null)
    if (result.ok) {
      patch(runId, {
        ...withDetail(runId, result.value.detail),
        refreshing: false,
        loading: false,
        problem: null,
        stale: result.value.problem,
      })
    } else if (entry(runId).detail) {
      patch(runId, { refreshing: false, stale: result.error })
    } else {
      patch(runId, { refreshing: false, loading: false, problem: result.error })
    }
  }

  return {
    runPages: {},
    runPageHiddenLevels: ['debug'],
    setRunPageHiddenLevels: (codes) => {
      set({ runPageHiddenLevels: codes })
    },
    runPageLoad: async (runId) => {
      patch(runId, { loading: entry(runId).detail === null, problem: null })
      const api = atelier()
      const result = await settle(api ? () => api.runs.get({ runId }) : null)
      if (result.ok) patch(runId, { ...withDetail(runId, result.value), loading: false })
      // Not in the mirror (never synced, or just made): the service may know it.
      await refresh(runId)
    },
    runPageRefresh: refresh,
    runPageMoreLogs: async (runId) => {
      const { detail, moreLogsNext } = entry(runId)
      if (!detail || moreLogsNext === null) return
      const api = atelier()
      const result = await settle(api ? () => api.runs.logs({ runId, after: moreLogsNext }) : null)
      if (!result.ok) {
        toast('The log could not be read', result.error)
        return
      }
      const current = entry(runId).detail ?? detail
      patch(runId, {
        detail: {
          ...current,
          logs: { items: [...current.logs.items, ...result.value.items], next: null },
        },
        moreLogsNext: result.value.next,
      })
    },
    runPageCancel: async (runId) => {
      const api = atelier()
      const result = await settle(api ? () => api.runs.cancel({ runId }) : null)
      if (!result.ok) {
        toast('The run was not canceled', result.error)
        return result.error
      }
      patch(runId, withDetail(runId, result.value))
      get().pushToast({ tone: 'success', title: 'Run canceled' })
      return null
    },
    runPageRerun: async (runId, idempotencyKey, seed = 'same') => {
      const api = atelier()
      const result = await settle(
        api ? () => api.runs.rerun({ runId, idempotencyKey, seed }) : null,
      )
      if (!result.ok) {
        toast('The re-run did not start', result.error)
        return result.error
      }
      return result.value.runId
    },
    runPageRedeliver: async (runId) => {
      const api = atelier()
      const result = await settle(api ? () => api.deliveries.redeliver({ runId }) : null)
      if (!result.ok) {
        toast('The callback was not sent again', result.error)
        return result.error
      }
      const deliveries: RunCallbackDelivery[] = result.value
      const { detail } = entry(runId)
      if (detail) patch(runId, { detail: { ...detail, deliveries } })
      get().pushToast({
        tone: 'success',
        title: 'Callback sent again',
        message: 'Its attempts appear here as they happen.',
      })
      // The new delivery's attempt comes within a moment: ask for it.
      await refresh(runId)
      return null
    },
    runPageVerify: async (args) => {
      const api = atelier()
      const result = await settle(api ? () => api.deliveries.verify(args) : null)
      return result.ok ? result.value : result.error
    },
  }
}
