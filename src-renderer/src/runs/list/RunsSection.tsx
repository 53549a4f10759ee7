import { useEffect, useRef } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { RunCompare, RunPage } from '../page'
import { matches } from '../../shell/shortcuts'
import { SECTION_COPY } from '../../shell/sections'
import { useAppStore } from '../../store'
import { FilterBar, hasRunFilters } from './FilterBar'
import { RunsTable } from './RunsTable'
import { totalWords } from './words'
import './runs-list.css'

/** The line over the list: how many, whether offline, and the compare action. */
function Summary() {
  const { rows, total, loading, offline, checked, compareRuns, clearChecked } = useAppStore(
    useShallow((s) => ({
      rows: s.runRows,
      total: s.runsTotal,
      loading: s.runsLoading,
      offline: s.sync?.state === 'offline',
      checked: s.checkedRunIds,
      compareRuns: s.compareRuns,
      clearChecked: s.toggleRunChecked,
    })),
  )
  return (
    <div className="runs-summary">
      <span className="runs-count" aria-live="polite">
        {rows === null ? 'Loading runs…' : totalWords(total, rows.length)}
        {loading === 'more' ? <span className="muted"> · loading more…</span> : null}
      </span>
      {offline ? (
        <span className="runs-offline" title="The service cannot be reached right now.">
          Offline — showing what was synced
        </span>
      ) : null}
      <span className="runs-summary-actions">
        {checked.length > 0 ? (
          <span className="muted">
            {checked.length === 1 ? 'Tick one more run to compare' : '2 runs ticked'}
          </span>
        ) : null}
        {checked.length > 0 ? (
          <button
            type="button"
            className="link-button"
            onClick={() => {
              for (const id of checked) clearChecked(id)
            }}
          >
            Untick
          </button>
        ) : null}
        <button
          type="button"
          className="small-button"
          disabled={checked.length !== 2}
          title="Tick two runs (or Ctrl/⌘+click them) to compare them side by side"
          onClick={() => {
            compareRuns()
          }}
        >
          Compare
        </button>
      </span>
    </div>
  )
}

function Empty() {
  const { filtered, clearRunFilters } = useAppStore(
    useShallow((s) => ({
      filtered: hasRunFilters(s.runFilters),
      clearRunFilters: s.clearRunFilters,
    })),
  )
  const copy = SECTION_COPY.runs
  if (!filtered) {
    return (
      <div className="empty-state" role="status">
        <h2>{copy.emptyTitle}</h2>
        <p>{copy.emptyHint}</p>
      </div>
    )
  }
  return (
    <div className="empty-state" role="status">
      <h2>No runs match</h2>
      <p>
        Nothing synced matches these words and filters.{' '}
        <button
          type="button"
          className="link-button"
          onClick={() => {
            void clearRunFilters()
          }}
        >
          Clear filters
        </button>
      </p>
    </div>
  )
}

/**
 * The Runs section: the list of every synced run with its filters, and, where it goes, the run
 * page (or the compare view) of the run opened from it. The list stays mounted underneath, so
 * closing the page comes back to the same rows at the same scroll.
 */
export function RunsSection() {
  const {
    rows,
    problem,
    selectedRunId,
    compareRunIds,
    syncedAt,
    loadRuns,
    refreshRuns,
    loadRunFilterOptions,
    closeRun,
    closeCompare,
  } = useAppStore(
    useShallow((s) => ({
      rows: s.runRows,
      problem: s.runsProblem,
      selectedRunId: s.selectedRunId,
      compareRunIds: s.compareRunIds,
      syncedAt: s.sync?.last?.outcome === 'ok' ? s.sync.last.finishedAt : null,
      loadRuns: s.loadRuns,
      refreshRuns: s.refreshRuns,
      loadRunFilterOptions: s.loadRunFilterOptions,
      closeRun: s.closeRun,
      closeCompare: s.closeCompare,
    })),
  )
  const searchRef = useRef<HTMLInputElement>(null)
  const listRef = useRef<HTMLDivElement>(null)
  const pageOpen = selectedRunId !== null || compareRunIds !== null

  useEffect(() => {
    // The mirror first, at once; what a sync brings is merged in as it ends (below).
    if (useAppStore.getState().runRows === null) void loadRuns()
    void loadRunFilterOptions()
  }, [loadRuns, loadRunFilterOptions])

  const seenSync = useRef(syncedAt)
  useEffect(() => {
    if (syncedAt === null || syncedAt === seenSync.current) return
    seenSync.current = syncedAt
    void refreshRuns()
    void loadRunFilterOptions()
  }, [syncedAt, refreshRuns, loadRunFilterOptions])

  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (!matches('runs.search', event)) return
      event.preventDefault()
      if (useAppStore.getState().selectedRunId !== null) closeRun()
      useAppStore.getState().closeCompare()
      searchRef.current?.focus()
      searchRef.current?.select()
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [closeRun])

  // Back where the person was: the list's keys work again at once.
  const focusList = () => {
    requestAnimationFrame(() => {
      listRef.current?.querySelector<HTMLElement>('.runs-grid')?.focus()
    })
  }

  return (
    <div className="runs-section">
      {compareRunIds !== null ? (
        <RunCompare
          runIds={compareRunIds}
          onClose={() => {
            closeCompare()
            focusList()
          }}
        />
      ) : selectedRunId !== null ? (
        <RunPage
          runId={selectedRunId}
          onClose={() => {
            closeRun()
            focusList()
          }}
        />
      ) : null}
      <div className="runs-list" ref={listRef} hidden={pageOpen}>
        <FilterBar searchRef={searchRef} />
        {problem !== null ? (
          <div className="banner error" role="alert">
            {problem.text}
          </div>
        ) : null}
        <Summary />
        {rows === null ? null : rows.length === 0 ? <Empty /> : <RunsTable rows={rows} />}
      </div>
    </div>
  )
}
