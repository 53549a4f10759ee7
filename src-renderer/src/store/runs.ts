import type { RunStatusCode } from '../../../src-shared/api'
import type {
  RunFilterOptions,
  RunListQueryInput,
  RunListRow,
  RunListTotal,
} from '../../../src-shared/domain/runs-list'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import { explainError, type PlainError } from '../shell/errorWords'
import type { SliceWithApi } from './api'

/** What the filter bar sets; the list asks for exactly this, newest first. */
export interface RunFilters {
  text: string
  statuses: RunStatusCode[]
  model: string | null
  flowId: string | null
  /** Created at or after / before, epoch ms (local days, as the date fields show them). */
  fromMs: number | null
  toMs: number | null
  /** Credits as typed, e.g. "0.05"; empty: no bound. */
  minCost: string
  maxCost: string
}

export const NO_RUN_FILTERS: RunFilters = {
  text: '',
  statuses: [],
  model: null,
  flowId: null,
  fromMs: null,
  toMs: null,
  minCost: '',
  maxCost: '',
}

/** A page fills a tall window with rows to spare; scrolling asks for the next one early. */
export const RUN_PAGE_SIZE = 100

export interface RunsSlice {
  runFilters: RunFilters
  /** The rows loaded so far, newest first; null before the first page came. */
  runRows: RunListRow[] | null
  /** The cursor of the next page; null at the end. */
  runsNext: string | null
  /** Of the first page: how many match (capped; `more` past the cap). */
  runsTotal: RunListTotal | null
  runsLoading: 'first' | 'more' | null
  runsProblem: PlainError | null
  runFilterOptions: RunFilterOptions | null
  /** The run whose page is open (the run page's component shows it). */
  selectedRunId: string | null
  /** Two runs side by side in the run page's compare view. */
  compareRunIds: [string, string] | null
  /** Rows ticked for comparing, oldest tick first; at most two. */
  checkedRunIds: string[]
  /** Changes filters (merged) and loads the first page of the new list. */
  setRunFilters: (patch: Partial<RunFilters>) => Promise<void>
  clearRunFilters: () => Promise<void>
  /** The first page, again: what the filters find now. */
  loadRuns: () => Promise<void>
  /** The next page, when there is one and none is on its way. */
  loadMoreRuns: () => Promise<void>
  /**
   * After a sync or a change the app made itself (`mirror.changed`): the newest page again,
   * merged into what is loaded (new runs on top, changed ones updated in place), so the rows
   * someone scrolled to stay where they are. Refreshes asked for during one make one more.
   */
  refreshRuns: () => Promise<void>
  loadRunFilterOptions: () => Promise<void>
  openRun: (id: string) => void
  closeRun: () => void
  /** Ticks or unticks a row for comparing; a third tick lets the oldest go. */
  toggleRunChecked: (id: string) => void
  /** Opens the compare view of the two ticked runs. */
  compareRuns: (ids?: [string, string]) => void
  closeCompare: () => void
}

function queryOf(filters: RunFilters): RunListQueryInput {
  return {
    text: filters.text,
    statuses: filters.statuses,
    ...(filters.model === null ? {} : { model: filters.model }),
    ...(filters.flowId === null ? {} : { flowId: filters.flowId }),
    ...(filters.fromMs === null ? {} : { fromMs: filters.fromMs }),
    ...(filters.toMs === null ? {} : { toMs: filters.toMs }),
    ...(filters.minCost.trim() === '' ? {} : { minCost: filters.minCost.trim() }),
    ...(filters.maxCost.trim() === '' ? {} : { maxCost: filters.maxCost.trim() }),
  }
}

const notConnected: PlainError = {
  code: 'UNAVAILABLE',
  title: 'Not connected to Atelier',
  text: 'This page is not connected to Atelier, so it cannot list runs.',
  detail: 'This page is not connected to Atelier, so it cannot list runs.',
  issues: [],
  fix: null,
}

export const createRunsSlice: SliceWithApi<RunsSlice> = (atelier) => (set, get) => {
  // Each new list (filters changed) outdates the answers still on their way for the old one.
  let generation = 0
  /** The refresh under way, and how many were asked for: one asked during it reads once more. */
  let refreshing: Promise<void> | null = null
  let refreshesAsked = 0
  /**
   * After runs were written: merged in, or, while the first page is on its way, that page asked
   * again, as its answer may predate the write ("0 runs" beside a model filter already listing
   * the models that ran, on a first visit during the first sync).
   */
  const reloadWritten = () => {
    if (get().runsLoading === 'first') void get().loadRuns()
    else void get().refreshRuns()
    if (get().runFilterOptions !== null) void get().loadRunFilterOptions()
  }

  /**
   * The bridge whose events are heard, from the first page on: a list once shown keeps itself
   * current, whether its section is in view or not.
   */
  let heard: AtelierApi | null = null
  const hear = (api: AtelierApi) => {
    if (heard === api) return
    heard = api
    api.on('mirror.changed', ({ collections }) => {
      if (collections.includes('runs')) reloadWritten()
    })
    // A sync's end merges what it brought (the section does that); only a first page asked
    // while it wrote needs asking again, which the section cannot see.
    let syncing = get().sync?.state === 'syncing'
    api.on('sync.status', (status) => {
      const ended = syncing && status.state !== 'syncing'
      syncing = status.state === 'syncing'
      if (ended && get().runsLoading === 'first') reloadWritten()
    })
  }

  const refreshOnce = async (api: AtelierApi) => {
    const mine = generation
    const result = await api.runs.list({ ...queryOf(get().runFilters), limit: RUN_PAGE_SIZE })
    if (mine !== generation || !result.ok) return
    const rows = get().runRows ?? []
    const fresh = new Map(result.value.items.map((row) => [row.id, row]))
    const newest = rows[0]?.createdMs ?? Number.NEGATIVE_INFINITY
    const held = new Set(rows.map((row) => row.id))
    const added = result.value.items.filter((row) => !held.has(row.id) && row.createdMs >= newest)
    set({
      runRows: [...added, ...rows.map((row) => fresh.get(row.id) ?? row)],
      runsTotal: result.value.total,
      // A list that ended before the sync ends with its first page now, if that is all.
      runsNext: rows.length === 0 ? result.value.next : get().runsNext,
    })
  }

  return {
    runFilters: NO_RUN_FILTERS,
    runRows: null,
    runsNext: null,
    runsTotal: null,
    runsLoading: null,
    runsProblem: null,
    runFilterOptions: null,
    selectedRunId: null,
    compareRunIds: null,
    checkedRunIds: [],

    setRunFilters: (patch) => {
      set({ runFilters: { ...get().runFilters, ...patch } })
      return get().loadRuns()
    },

    clearRunFilters: () => {
      set({ runFilters: NO_RUN_FILTERS })
      return get().loadRuns()
    },

    loadRuns: async () => {
      const api = atelier()
      if (!api) {
        set({ runsProblem: notConnected })
        return
      }
      hear(api)
      const mine = ++generation
      set({ runsLoading: 'first' })
      const result = await api.runs.list({
        ...queryOf(get().runFilters),
        limit: RUN_PAGE_SIZE,
      })
      if (mine !== generation) return
      if (!result.ok) {
        set({ runsLoading: null, runsProblem: explainError(result.error) })
        return
      }
      set({
        runRows: result.value.items,
        runsNext: result.value.next,
        runsTotal: result.value.total,
        runsLoading: null,
        runsProblem: null,
      })
    },

    loadMoreRuns: async () => {
      const api = atelier()
      const { runsNext, runsLoading } = get()
      if (!api || runsNext === null || runsLoading !== null) return
      const mine = generation
      set({ runsLoading: 'more' })
      const result = await api.runs.list({
        ...queryOf(get().runFilters),
        limit: RUN_PAGE_SIZE,
        cursor: runsNext,
      })
      if (mine !== generation) return
      if (!result.ok) {
        set({ runsLoading: null, runsProblem: explainError(result.error) })
        return
      }
      const seen = new Set((get().runRows ?? []).map((row) => row.id))
      set({
        runRows: [...(get().runRows ?? []), ...result.value.items.filter((r) => !seen.has(r.id))],
        runsNext: result.value.next,
        runsLoading: null,
        runsProblem: null,
      })
    },

    refreshRuns: async () => {
      const api = atelier()
      if (!api || get().runRows === null || get().runsLoading === 'first') return
      refreshesAsked++
      if (refreshing) return refreshing
      refreshing = (async () => {
        for (;;) {
          const asked = refreshesAsked
          await refreshOnce(api)
          if (refreshesAsked === asked) return
        }
      })().finally(() => {
        refreshing = null
      })
      return refreshing
    },

    loadRunFilterOptions: async () => {
      const api = atelier()
      if (!api) return
      const result = await api.runs.filterOptions()
      if (result.ok) set({ runFilterOptions: result.value })
    },

    openRun: (id) => {
      set({ selectedRunId: id, compareRunIds: null })
    },

    closeRun: () => {
      set({ selectedRunId: null })
    },

    toggleRunChecked: (id) => {
      const checked = get().checkedRunIds
      set({
        checkedRunIds: checked.includes(id)
          ? checked.filter((other) => other !== id)
          : [...checked, id].slice(-2),
      })
    },

    compareRuns: (ids) => {
      const [a, b] = ids ?? get().checkedRunIds
      if (a === undefined || b === undefined) return
      set({ compareRunIds: [a, b], selectedRunId: null })
    },

    closeCompare: () => {
      set({ compareRunIds: null })
    },
  }
}
