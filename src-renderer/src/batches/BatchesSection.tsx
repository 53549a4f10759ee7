import { useCallback, useEffect, useRef, useState, type CSSProperties } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { BatchDetail, BatchRow } from '../../../src-shared/domain/batches'
import type { IpcResult } from '../../../src-shared/ipc/result'
import { codeWords } from '../components/codeWords'
import { costWords, createdTitle, createdWords, statusWords } from '../runs/list/words'
import { SECTION_COPY } from '../shell/sections'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import '../runs/list/runs-list.css'

/**
 * The Batches section (issue 18's worked example of a review screen): the mirror's batches,
 * newest first, and a batch's items, each opening its run's page. Its state is the screen's
 * own (a hook over the API), not a store slice: nothing else reads it.
 */

const PAGE = 50
const NOT_CONNECTED = 'This page is not connected to Atelier, so there are no batches to show.'

const STATUS_WORDS: Record<BatchRow['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  partial_succeeded: 'Partly succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
}

/** The run list's chip colours; a partial success reads as a warning, like a cancel. */
const chipClass = (status: string) =>
  `status-chip status-${status === 'partial_succeeded' ? 'canceled' : status}`

const plural = (n: number, one: string, many: string) =>
  `${n.toLocaleString()} ${n === 1 ? one : many}`

/** "12 items · 10 succeeded · 2 failed": the counts that are not zero. */
export function itemWords(row: BatchRow): string {
  const parts = [plural(row.itemCount, 'item', 'items')]
  if (row.succeededCount > 0) parts.push(`${row.succeededCount.toLocaleString()} succeeded`)
  if (row.failedCount > 0) parts.push(`${row.failedCount.toLocaleString()} failed`)
  if (row.canceledCount > 0) parts.push(`${row.canceledCount.toLocaleString()} canceled`)
  return parts.join(' · ')
}

/** When a sync last ended well: the list reads the mirror again then. */
function useSyncedAt(): number | null {
  return useAppStore((s) => (s.sync?.last?.outcome === 'ok' ? s.sync.last.finishedAt : null))
}

function unwrap<T>(result: IpcResult<T>): T {
  if (!result.ok) throw new Error(errorText(result.error))
  return result.value
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The list, a page at a time, read again from the top after each sync. */
function useBatchList() {
  const [rows, setRows] = useState<BatchRow[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [loadingMore, setLoadingMore] = useState(false)
  const [problem, setProblem] = useState<string | null>(null)
  const syncedAt = useSyncedAt()
  // A page asked for before the latest first page is dropped when it comes back.
  const generation = useRef(0)

  useEffect(() => {
    const api = window.atelier
    if (!api) return
    const mine = ++generation.current
    api.batches.list({ limit: PAGE }).then(
      (result) => {
        if (mine !== generation.current) return
        try {
          const page = unwrap(result)
          setRows(page.items)
          setNext(page.next)
          setProblem(null)
        } catch (error) {
          setProblem(messageOf(error))
        }
      },
      (error: unknown) => {
        if (mine === generation.current) setProblem(messageOf(error))
      },
    )
  }, [syncedAt])

  const loadMore = useCallback(() => {
    const api = window.atelier
    if (!api || next === null || loadingMore) return
    const mine = generation.current
    setLoadingMore(true)
    api.batches
      .list({ limit: PAGE, cursor: next })
      .then((result) => {
        if (mine !== generation.current) return
        const page = unwrap(result)
        setRows((shown) => [...(shown ?? []), ...page.items])
        setNext(page.next)
      })
      .catch((error: unknown) => {
        if (mine === generation.current) setProblem(messageOf(error))
      })
      .finally(() => {
        setLoadingMore(false)
      })
  }, [next, loadingMore])

  return {
    rows,
    next,
    loadingMore,
    problem: window.atelier === undefined ? NOT_CONNECTED : problem,
    loadMore,
  }
}

/** One batch with its items, read again after each sync while it is open. */
function useBatchDetail(id: string) {
  const [detail, setDetail] = useState<BatchDetail | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const syncedAt = useSyncedAt()

  useEffect(() => {
    const api = window.atelier
    if (!api) return
    let current = true
    api.batches.get({ id }).then(
      (result) => {
        if (!current) return
        if (result.ok) {
          setDetail(result.value)
          setProblem(null)
        } else {
          setProblem(errorText(result.error))
        }
      },
      (error: unknown) => {
        if (current) setProblem(messageOf(error))
      },
    )
    return () => {
      current = false
    }
  }, [id, syncedAt])

  return { detail, problem: window.atelier === undefined ? NOT_CONNECTED : problem }
}

// The run list's grid, with columns of its own and rows in the flow (it is not virtualized).
const GRID = {
  '--runs-columns': '132px minmax(160px, 1fr) minmax(200px, 1.2fr) 84px 128px',
} as CSSProperties
const ROW: CSSProperties = { position: 'relative' }

function BatchList({ onOpen }: { onOpen: (id: string) => void }) {
  const { rows, next, loadingMore, problem, loadMore } = useBatchList()
  const offline = useAppStore((s) => s.sync?.state === 'offline')
  const copy = SECTION_COPY.batches
  return (
    <div className="runs-list">
      <div className="runs-summary">
        <span className="runs-count" aria-live="polite">
          {rows === null
            ? 'Loading batches…'
            : `${plural(rows.length, 'batch', 'batches')}${next === null ? '' : ' so far'}`}
        </span>
        {offline ? (
          <span className="runs-offline" title="The service cannot be reached right now.">
            Offline — showing what was synced
          </span>
        ) : null}
      </div>
      {problem !== null ? (
        <div className="banner error" role="alert">
          {problem}
        </div>
      ) : null}
      {rows !== null && rows.length === 0 ? (
        <div className="empty-state" role="status">
          <h2>{copy.emptyTitle}</h2>
          <p>{copy.emptyHint}</p>
        </div>
      ) : null}
      {rows !== null && rows.length > 0 ? (
        <div className="runs-grid" role="grid" aria-label="Batches" style={GRID}>
          <div className="runs-head" role="row">
            <span role="columnheader">Status</span>
            <span role="columnheader">Name</span>
            <span role="columnheader">Items</span>
            <span role="columnheader">Cost</span>
            <span role="columnheader">Created</span>
          </div>
          <div className="runs-scroll">
            {rows.map((row) => (
              <div
                key={row.id}
                role="row"
                tabIndex={0}
                data-batch-id={row.id}
                className="runs-row"
                style={ROW}
                title={`Open the batch ${row.id}`}
                onClick={() => {
                  onOpen(row.id)
                }}
                onKeyDown={(event) => {
                  if (event.key !== 'Enter') return
                  event.preventDefault()
                  onOpen(row.id)
                }}
              >
                <span role="gridcell">
                  <span className={chipClass(row.status)}>
                    <span className="status-dot" aria-hidden="true" />
                    {codeWords(STATUS_WORDS, row.status)}
                  </span>
                </span>
                <span role="gridcell" className="runs-cell-text" title={row.modelSlug}>
                  {row.name}
                </span>
                <span role="gridcell" className="runs-cell-target">
                  {itemWords(row)}
                </span>
                <span role="gridcell" className="runs-cell-number">
                  {costWords(row.cost)}
                </span>
                <span
                  role="gridcell"
                  className="runs-cell-created"
                  title={createdTitle(Date.parse(row.createdAt))}
                >
                  {createdWords(Date.parse(row.createdAt))}
                </span>
              </div>
            ))}
          </div>
        </div>
      ) : null}
      {next !== null ? (
        <button type="button" className="small-button" disabled={loadingMore} onClick={loadMore}>
          {loadingMore ? 'Loading more…' : 'Show more batches'}
        </button>
      ) : null}
    </div>
  )
}

function BatchPage({ id, onClose }: { id: string; onClose: () => void }) {
  const { detail, problem } = useBatchDetail(id)
  const { goTo, openRun } = useAppStore(useShallow((s) => ({ goTo: s.goTo, openRun: s.openRun })))
  return (
    <section className="runs-list" aria-label="Batch">
      <div className="runs-summary">
        <button type="button" className="link-button" onClick={onClose}>
          ← All batches
        </button>
      </div>
      {problem !== null ? (
        <div className="banner error" role="alert">
          {problem}
        </div>
      ) : null}
      {detail === null ? (
        problem === null ? (
          <p className="muted">Loading the batch…</p>
        ) : null
      ) : (
        <>
          <h2>
            {detail.name}{' '}
            <span className={chipClass(detail.status)}>
              <span className="status-dot" aria-hidden="true" />
              {codeWords(STATUS_WORDS, detail.status)}
            </span>
          </h2>
          <p className="muted">
            {detail.modelSlug} · {itemWords(detail)} · {costWords(detail.cost)} credits · created{' '}
            {createdWords(Date.parse(detail.createdAt))}
            {detail.completedAt === null
              ? ''
              : ` · finished ${createdWords(Date.parse(detail.completedAt))}`}
          </p>
          <ul className="batch-items" aria-label="Runs of the batch">
            {detail.items.map((item) => (
              <li key={item.runId}>
                <span className={chipClass(item.status)}>
                  <span className="status-dot" aria-hidden="true" />
                  {statusWords(item.status)}
                </span>{' '}
                Item {item.index + 1}{' '}
                <button
                  type="button"
                  className="link-button"
                  title={`Open the run ${item.runId}`}
                  onClick={() => {
                    goTo('runs')
                    openRun(item.runId)
                  }}
                >
                  Open run
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

/** The list, or the batch opened from it; Back comes to the list read again. */
export function BatchesSection() {
  const [openId, setOpenId] = useState<string | null>(null)
  return (
    <div className="runs-section">
      {openId === null ? (
        <BatchList onOpen={setOpenId} />
      ) : (
        <BatchPage
          id={openId}
          onClose={() => {
            setOpenId(null)
          }}
        />
      )}
    </div>
  )
}
