import type { FlowRunTotals } from '../../../src-shared/domain/flow-run'
import { SEARCH_LIMIT_MAX, type SearchResultItem } from '../../../src-shared/domain/search'
import type { SyncSummary } from '../../../src-shared/domain/sync'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import { creditsWords } from '../flows/words'
import { explainSyncFailure, type PlainError } from '../shell/errorWords'
import type { SliceWithApi } from './api'
import type { ToastAction, ToastInput } from './toasts'

export interface BackgroundSlice {
  /**
   * Tells what finished in the background, as toasts: a sync that brought records or failed, a
   * flow run whose editor is not in view, the main process's info notices. Keeps the account's
   * balance fresh after each. Returns the unsubscribe.
   */
  connectBackground: () => () => void
}

const count = new Intl.NumberFormat()

/** What a sync brought that people know: records created since the newest one seen before. */
export interface NewRecords {
  runs: number
  evaluations: number
  assets: number
  /** There were more than could be counted at once. */
  more: boolean
}

const KIND_WORDS: { kind: keyof Omit<NewRecords, 'more'>; one: string; many: string }[] = [
  { kind: 'runs', one: 'new run', many: 'new runs' },
  { kind: 'evaluations', one: 'new evaluation', many: 'new evaluations' },
  { kind: 'assets', one: 'new asset', many: 'new assets' },
]

/** "2 new runs, 1 new asset", or null when there is none. */
export function newRecordsWords(found: NewRecords): string | null {
  const parts = KIND_WORDS.filter(({ kind }) => found[kind] > 0).map(({ kind, one, many }) =>
    found[kind] === 1 ? `1 ${one}` : `${count.format(found[kind])}${found.more ? '+' : ''} ${many}`,
  )
  return parts.length === 0 ? null : parts.join(', ')
}

/**
 * What a finished sync is worth telling, compared with the one before; null: nothing. `found`
 * is what it brought, as the mirror tells (null: not known); the summary's own count is not
 * used, as it includes the catalogs read again at every sync.
 */
export function syncToast(
  last: SyncSummary,
  before: SyncSummary | null,
  found: NewRecords | null,
  fixes: { settings: () => void; retry: () => void },
): ToastInput | null {
  const failure = explainSyncFailure(last)
  if (failure) {
    // Once per kind of failure: the retries every few seconds while offline say nothing new.
    if (before?.outcome === last.outcome) return null
    return {
      tone: failure.fix === 'settings' ? 'error' : 'warning',
      title: failure.title,
      message: failure.detail,
      ...fixAction(failure, fixes),
    }
  }
  if (last.outcome !== 'ok') return null
  const back = before !== null && before.outcome !== 'ok' && before.outcome !== 'aborted'
  const parts: string[] = []
  const brought = found === null ? null : newRecordsWords(found)
  if (brought !== null) parts.push(brought)
  if (last.deleted > 0) {
    parts.push(
      last.deleted === 1 ? '1 record removed' : `${count.format(last.deleted)} records removed`,
    )
  }
  if (parts.length === 0 && !back) return null
  return {
    tone: 'success',
    title: back ? 'Back online: synced' : 'Synced',
    message: parts.length > 0 ? `${parts.join(', ')}.` : 'Everything is up to date.',
  }
}

function fixAction(
  failure: PlainError,
  fixes: { settings: () => void; retry: () => void },
): { action?: ToastAction } {
  if (failure.fix === 'settings') return { action: { label: 'Open Settings', run: fixes.settings } }
  if (failure.fix === 'retry') return { action: { label: 'Retry', run: fixes.retry } }
  return {}
}

const RUN_WORDS = { succeeded: 'finished', failed: 'failed', canceled: 'was canceled' } as const

/** "Cost 0.0400 credits · 1 node failed". */
export function runSummary(totals: FlowRunTotals): string {
  const parts = [`Cost ${creditsWords(totals.costMicro)}`]
  if (totals.failed > 0)
    parts.push(totals.failed === 1 ? '1 node failed' : `${totals.failed} nodes failed`)
  if (totals.cached > 0) parts.push(`${totals.cached} from cache`)
  return parts.join(' · ')
}

/**
 * Counts what each sync brought by asking the mirror for its newest runs, evaluations and
 * assets, and comparing their creation times with the newest seen at the count before. The
 * first count only takes the measure. Never throws: a failed search counts as not known.
 */
function newRecordsCounter(api: AtelierApi): { count: () => Promise<NewRecords | null> } {
  let newestMs: number | null = null
  const look = async (): Promise<SearchResultItem[] | null> => {
    const result = await api.search.query({ text: '', limit: SEARCH_LIMIT_MAX })
    return result.ok ? result.value.items : null
  }
  const newestOf = (items: SearchResultItem[]) =>
    items.reduce((newest, item) => Math.max(newest, Date.parse(item.createdAt)), 0)
  const measured = look().then((items) => {
    if (items !== null) newestMs = newestOf(items)
  })
  return {
    count: async () => {
      await measured
      const items = await look()
      if (items === null) return null
      const since = newestMs
      newestMs = Math.max(newestMs ?? 0, newestOf(items))
      if (since === null) return null
      const newer = items.filter((item) => Date.parse(item.createdAt) > since)
      const of = (kind: SearchResultItem['kind']) => newer.filter((i) => i.kind === kind).length
      return {
        runs: of('run'),
        evaluations: of('evaluation'),
        assets: of('asset'),
        more: newer.length === SEARCH_LIMIT_MAX,
      }
    },
  }
}

/** Flow runs whose start was seen, for their flow's name; a finished run is forgotten. */
const RUNS_REMEMBERED = 200

export const createBackgroundSlice: SliceWithApi<BackgroundSlice> = (atelier) => (_set, get) => ({
  connectBackground: () => {
    const api = atelier()
    if (!api) return () => undefined
    void get().loadAccount()
    let heard = false
    /** The last finished sync told, to compare the next one with. */
    let told: SyncSummary | null = null
    const flowOfRun = new Map<string, string>()
    const fresh = newRecordsCounter(api)
    // One sync's toast after the other, in order, though each waits for the mirror's answer.
    let telling = Promise.resolve()

    const offSync = api.on('sync.status', (status) => {
      const first = !heard
      heard = true
      const last = status.last
      if (status.state === 'syncing' || last === null || last.finishedAt === told?.finishedAt) {
        return
      }
      const before = told
      told = last
      void get().loadAccount()
      telling = telling.then(async () => {
        const found = last.outcome === 'ok' ? await fresh.count() : null
        // The first status heard may tell a sync that ended before the window listened: old news.
        if (first) return
        const toast = syncToast(last, before, found, {
          settings: () => {
            get().goTo('settings')
          },
          retry: () => {
            void get().requestSync()
          },
        })
        if (toast) get().pushToast(toast)
      })
    })

    const offRuns = api.on('flowRuns.event', ({ flowRunId, event }) => {
      if (event.type === 'flow-started') {
        if (flowOfRun.size >= RUNS_REMEMBERED) flowOfRun.clear()
        flowOfRun.set(flowRunId, event.flowId)
        return
      }
      if (event.type !== 'flow-finished') return
      const flowId = flowOfRun.get(flowRunId)
      flowOfRun.delete(flowRunId)
      // No balance asked here: main reads it once after the run and tells it (`account.changed`).
      const state = get()
      // Its editor shows the run's end by itself.
      if (state.section === 'flows' && state.run?.flowRunId === flowRunId) return
      const name =
        flowId === undefined
          ? undefined
          : (state.flows?.find((flow) => flow.id === flowId)?.name ??
            (state.editor?.id === flowId ? state.editor.name : undefined))
      const title = `${name === undefined ? 'A flow run' : `“${name}”`} ${RUN_WORDS[event.state]}`
      get().pushToast({
        tone: event.state === 'failed' ? 'error' : event.state === 'succeeded' ? 'success' : 'info',
        title,
        message: runSummary(event.totals),
        ...(flowId === undefined
          ? {}
          : {
              action: {
                label: 'Open flow',
                run: () => {
                  get().closeOverlay()
                  get().goTo('flows')
                  void get().openFlow(flowId)
                },
              },
            }),
      })
    })

    // Warnings and errors stay as banners until dismissed (a damaged mirror was rebuilt): they
    // need reading. Info passes by as a toast.
    const offNotice = api.on('app.notice', (notice) => {
      if (notice.level === 'info') get().pushToast({ tone: 'info', title: notice.message })
    })

    return () => {
      offSync()
      offRuns()
      offNotice()
    }
  },
})
