import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { EvaluationStatusCode } from '../../../src-shared/api'
import {
  FEEDBACK_FILTERS,
  type EvaluationRow,
  type FeedbackFilter,
  type Verdict,
} from '../../../src-shared/domain/evaluations'
import { EVALUATION_STATUSES } from '../../../src-shared/domain/search'
import { useAppStore } from '../store'
import { Thumb } from './Thumb'
import {
  createdWords,
  FEEDBACK_WORDS,
  fullTime,
  scorePercent,
  shownRating,
  STATUS_WORDS,
  statusWords,
  verdictClass,
  verdictWords,
} from './words'

/** Fixed, so the virtualizer knows every row's place without measuring one. */
const ROW_HEIGHT = 48
const OVERSCAN = 10
/** The next page is asked for when this few loaded rows are left below the view. */
const LOAD_AHEAD = 30
/** Typing settles this long before the mirror is searched. */
const TYPING_MS = 200
const NO_ROWS: EvaluationRow[] = []

export function VerdictChip({ row }: { row: Pick<EvaluationRow, 'verdict' | 'status'> }) {
  return <span className={`verdict-chip ${verdictClass(row)}`}>{verdictWords(row)}</span>
}

export function ScoreBar({ score }: { score: number | null }) {
  const percent = scorePercent(score)
  return (
    <span className="score" title={score === null ? 'No score' : `Score ${percent} of 100`}>
      <span className="score-bar" aria-hidden="true">
        <span style={{ width: `${score === null ? 0 : Math.round(score * 100)}%` }} />
      </span>
      <span className="score-value">{percent}</span>
    </span>
  )
}

function FeedbackMark({ row }: { row: EvaluationRow }) {
  const rating = shownRating(row.rating, row.pending)
  const waiting = row.pending?.state === 'pending'
  const refused = row.pending?.state === 'rejected'
  const words = rating === null ? 'Not rated' : rating === 'up' ? 'Thumbs up' : 'Thumbs down'
  const note = waiting ? ' (waiting to be sent)' : refused ? ' (refused by the service)' : ''
  return (
    <span
      className={`feedback-mark ${waiting ? 'waiting' : ''} ${refused ? 'refused' : ''}`}
      title={`${words}${note}`}
      aria-label={`${words}${note}`}
    >
      {rating === null ? <span className="no-rating">·</span> : <Thumb rating={rating} />}
      {waiting ? <span className="pending-dot" aria-hidden="true" /> : null}
    </span>
  )
}

function FilterBar() {
  const { filters, setFilters, clearFilters } = useAppStore(
    useShallow((s) => ({
      filters: s.evaluationFilters,
      setFilters: s.setEvaluationFilters,
      clearFilters: s.clearEvaluationFilters,
    })),
  )
  // The field answers every key; the mirror is searched once typing settles.
  const [text, setText] = useState(filters.text)
  useEffect(() => {
    if (text === filters.text) return
    const timer = setTimeout(() => {
      void setFilters({ text })
    }, TYPING_MS)
    return () => {
      clearTimeout(timer)
    }
  }, [text, filters.text, setFilters])

  const percent = (value: number | null) => (value === null ? '' : String(Math.round(value * 100)))
  const bound = (raw: string): number | null => {
    if (raw.trim() === '') return null
    const n = Number(raw)
    return Number.isFinite(n) ? Math.min(100, Math.max(0, n)) / 100 : null
  }
  const filtered =
    filters.text !== '' ||
    filters.verdict !== null ||
    filters.status !== null ||
    filters.feedback !== null ||
    filters.scoreMin !== null ||
    filters.scoreMax !== null

  return (
    <div className="evaluation-filters" role="search" aria-label="Filter the evaluations">
      <input
        type="search"
        className="evaluation-search"
        placeholder="Search prompts, judges, issues…"
        aria-label="Search the evaluations"
        value={text}
        onChange={(event) => {
          setText(event.target.value)
        }}
      />
      <select
        aria-label="Verdict"
        value={filters.verdict ?? ''}
        onChange={(event) => {
          void setFilters({ verdict: (event.target.value || null) as Verdict | null })
        }}
      >
        <option value="">Any verdict</option>
        <option value="passed">Passed</option>
        <option value="failed">Failed</option>
      </select>
      <select
        aria-label="Status"
        value={filters.status ?? ''}
        onChange={(event) => {
          void setFilters({ status: (event.target.value || null) as EvaluationStatusCode | null })
        }}
      >
        <option value="">Any status</option>
        {EVALUATION_STATUSES.map((status) => (
          <option key={status} value={status}>
            {STATUS_WORDS[status]}
          </option>
        ))}
      </select>
      <select
        aria-label="Feedback"
        value={filters.feedback ?? ''}
        onChange={(event) => {
          void setFilters({ feedback: (event.target.value || null) as FeedbackFilter | null })
        }}
      >
        <option value="">Any feedback</option>
        {FEEDBACK_FILTERS.map((feedback) => (
          <option key={feedback} value={feedback}>
            {FEEDBACK_WORDS[feedback]}
          </option>
        ))}
      </select>
      <label className="score-range">
        <span>Score</span>
        <input
          type="number"
          min={0}
          max={100}
          placeholder="0"
          aria-label="Lowest score"
          value={percent(filters.scoreMin)}
          onChange={(event) => {
            void setFilters({ scoreMin: bound(event.target.value) })
          }}
        />
        <span aria-hidden="true">–</span>
        <input
          type="number"
          min={0}
          max={100}
          placeholder="100"
          aria-label="Highest score"
          value={percent(filters.scoreMax)}
          onChange={(event) => {
            void setFilters({ scoreMax: bound(event.target.value) })
          }}
        />
      </label>
      {filtered ? (
        <button
          type="button"
          className="link-button"
          onClick={() => {
            setText('')
            void clearFilters()
          }}
        >
          Clear
        </button>
      ) : null}
    </div>
  )
}

function Rows() {
  const { loaded, next, loading, loadMore, open } = useAppStore(
    useShallow((s) => ({
      loaded: s.evaluationRows,
      next: s.evaluationsNext,
      loading: s.evaluationsLoading,
      loadMore: s.loadMoreEvaluations,
      open: s.openEvaluation,
    })),
  )
  const rows = loaded ?? NO_ROWS
  const scrollRef = useRef<HTMLDivElement>(null)
  const [activeId, setActiveId] = useState<string | null>(null)
  // The virtualizer hands out functions React's compiler cannot memoize; that is expected.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    getItemKey: (index) => rows[index]?.id ?? index,
    initialRect: { width: 960, height: 640 },
  })
  const items = virtualizer.getVirtualItems()
  const lastShown = items.at(-1)?.index ?? -1

  useEffect(() => {
    if (next !== null && loading === null && lastShown >= rows.length - LOAD_AHEAD) {
      void loadMore()
    }
  }, [lastShown, rows.length, next, loading, loadMore])

  const active = Math.max(
    0,
    rows.findIndex((row) => row.id === activeId),
  )
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const moves: Record<string, number> = {
      ArrowDown: active + 1,
      ArrowUp: active - 1,
      Home: 0,
      End: rows.length - 1,
    }
    const target = moves[event.key]
    if (target !== undefined) {
      event.preventDefault()
      const index = Math.max(0, Math.min(rows.length - 1, target))
      setActiveId(rows[index]?.id ?? null)
      virtualizer.scrollToIndex(index, { align: 'auto' })
    } else if (event.key === 'Enter') {
      const row = rows[active]
      if (row) void open(row.id)
    }
  }

  return (
    <div
      ref={scrollRef}
      className="evaluation-rows"
      role="listbox"
      aria-label="Evaluations"
      tabIndex={0}
      aria-activedescendant={rows[active] ? `evaluation-row-${rows[active].id}` : undefined}
      onKeyDown={onKeyDown}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {items.map((item) => {
          const row = rows[item.index]
          if (!row) return null
          return (
            <div
              key={item.key}
              id={`evaluation-row-${row.id}`}
              role="option"
              aria-selected={item.index === active}
              className={`evaluation-row ${item.index === active ? 'active' : ''}`}
              style={{ height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
              onClick={() => {
                setActiveId(row.id)
                void open(row.id)
              }}
            >
              <VerdictChip row={row} />
              <span className="evaluation-title" title={row.title}>
                {row.title}
                {row.attempt !== null && row.attempt > 1 ? (
                  <span className="attempt-tag">attempt {row.attempt}</span>
                ) : null}
                {row.superseded ? <span className="attempt-tag superseded">superseded</span> : null}
              </span>
              <ScoreBar score={row.score} />
              <span className={`evaluation-status status-${row.status ?? 'unknown'}`}>
                {row.status === null ? '' : statusWords(row.status)}
              </span>
              <FeedbackMark row={row} />
              <time dateTime={row.createdAt} title={fullTime(row.createdAt)}>
                {createdWords(row.createdAt)}
              </time>
            </div>
          )
        })}
      </div>
    </div>
  )
}

export function EvaluationList() {
  const { rows, loading, problem, load, openSubmit } = useAppStore(
    useShallow((s) => ({
      rows: s.evaluationRows,
      loading: s.evaluationsLoading,
      problem: s.evaluationsProblem,
      load: s.loadEvaluations,
      openSubmit: s.setSubmitOpen,
    })),
  )
  useEffect(() => {
    void load()
  }, [load])

  return (
    <div className="evaluations-list">
      <div className="evaluations-toolbar">
        <FilterBar />
        <button
          type="button"
          className="primary-button"
          onClick={() => {
            openSubmit(true)
          }}
        >
          Submit an evaluation…
        </button>
      </div>
      {problem ? (
        <div className="banner error" role="alert">
          {problem.text}
        </div>
      ) : null}
      {rows !== null && rows.length === 0 && loading === null ? (
        <div className="empty-state" role="status">
          <h2>No evaluations here</h2>
          <p>
            Nothing matches these filters. Change or clear them, submit an image, or sync to bring
            in the evaluations made on the service.
          </p>
        </div>
      ) : (
        <Rows />
      )}
    </div>
  )
}
