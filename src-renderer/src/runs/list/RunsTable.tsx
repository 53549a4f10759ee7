import { useVirtualizer } from '@tanstack/react-virtual'
import {
  memo,
  useCallback,
  useEffect,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
} from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { RunListRow } from '../../../../src-shared/domain/runs-list'
import { useAppStore } from '../../store'
import { costWords, createdTitle, createdWords, durationWords, statusWords } from './words'

/** Fixed, so the virtualizer knows every row's place without measuring one. */
export const ROW_HEIGHT = 40
/** Rows drawn beyond the visible ones, so a quick scroll does not show blank space. */
const OVERSCAN = 12
/** The next page is asked for when this few loaded rows are left below the view. */
const LOAD_AHEAD = 60

const rowDomId = (id: string) => `run-row-${id}`

function StatusChip({ row }: { row: RunListRow }) {
  return (
    <span
      className={`status-chip status-${row.status}`}
      title={row.failure === null ? undefined : `Failed: ${row.failure}`}
    >
      <span className="status-dot" aria-hidden="true" />
      {statusWords(row.status)}
    </span>
  )
}

interface RowProps {
  row: RunListRow
  index: number
  start: number
  active: boolean
  checked: boolean
  onClick: (event: MouseEvent, row: RunListRow) => void
  onToggle: (id: string) => void
}

/**
 * One row, drawn again only when its own props change: while scrolling, the rows already on
 * screen keep theirs, so a frame renders just the few that come into view.
 */
const RunRow = memo(function RunRow({
  row,
  index,
  start,
  active,
  checked,
  onClick,
  onToggle,
}: RowProps) {
  return (
    <div
      id={rowDomId(row.id)}
      role="row"
      aria-rowindex={index + 2}
      aria-selected={checked}
      data-run-id={row.id}
      className={`runs-row${active ? ' active' : ''}${checked ? ' checked' : ''}`}
      style={{ transform: `translateY(${String(start)}px)` }}
      onClick={(event) => {
        onClick(event, row)
      }}
    >
      <span role="gridcell" className="runs-cell-check">
        <input
          type="checkbox"
          tabIndex={-1}
          aria-label={`Select run ${row.id} to compare`}
          checked={checked}
          onClick={(event) => {
            event.stopPropagation()
          }}
          onChange={() => {
            onToggle(row.id)
          }}
        />
      </span>
      <span role="gridcell">
        <StatusChip row={row} />
      </span>
      <span role="gridcell" className="runs-cell-text" title={row.text ?? undefined}>
        {row.text ?? <span className="muted">No prompt</span>}
        {row.failure !== null ? <span className="runs-failure"> · {row.failure}</span> : null}
      </span>
      <span role="gridcell" className="runs-cell-target" title={row.model ?? row.flowId ?? ''}>
        {row.target === 'model' ? null : (
          <span className="runs-target-kind">{row.target === 'flow' ? 'Flow' : 'Workflow'}</span>
        )}
        {row.name}
      </span>
      <span role="gridcell" className="runs-cell-created" title={createdTitle(row.createdMs)}>
        {createdWords(row.createdMs)}
      </span>
      <span role="gridcell" className="runs-cell-number">
        {durationWords(row.durationMs)}
      </span>
      <span role="gridcell" className="runs-cell-number">
        {costWords(row.cost)}
      </span>
      <span role="gridcell" className="runs-cell-outputs">
        {row.hasOutputs ? (
          <svg viewBox="0 0 24 24" width="15" height="15" role="img" aria-label="Has outputs">
            <path
              d="M4 5h16v14H4zM4 15l4-4 4 4 3-3 5 5"
              fill="none"
              stroke="currentColor"
              strokeWidth="1.8"
              strokeLinejoin="round"
            />
          </svg>
        ) : null}
      </span>
    </div>
  )
})

/**
 * The list itself: a grid of fixed-height rows, only the visible ones in the DOM, loading the
 * next page as the end comes into view. ↑/↓ (Home/End, PageUp/PageDown) move the active row,
 * Enter opens it, Space ticks it for comparing; a click opens, Ctrl/⌘+click ticks.
 */
export function RunsTable({ rows }: { rows: RunListRow[] }) {
  const { next, total, checked, loadMoreRuns, openRun, toggleRunChecked } = useAppStore(
    useShallow((s) => ({
      next: s.runsNext,
      total: s.runsTotal,
      checked: s.checkedRunIds,
      loadMoreRuns: s.loadMoreRuns,
      openRun: s.openRun,
      toggleRunChecked: s.toggleRunChecked,
    })),
  )
  const scrollRef = useRef<HTMLDivElement>(null)
  const [activeId, setActiveId] = useState<string | null>(null)
  const found = activeId === null ? -1 : rows.findIndex((row) => row.id === activeId)
  const active = found === -1 ? 0 : found
  // eslint-disable-next-line react-hooks/incompatible-library -- its functions are read during render only
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    getItemKey: (index) => rows[index]?.id ?? index,
    // Scrolling renders in React's own time, not synchronously inside each scroll event.
    useFlushSync: false,
  })
  const items = virtualizer.getVirtualItems()
  const lastShown = items.at(-1)?.index ?? -1

  useEffect(() => {
    if (next !== null && lastShown >= rows.length - LOAD_AHEAD) void loadMoreRuns()
  }, [lastShown, rows.length, next, loadMoreRuns])

  const moveTo = (index: number) => {
    const clamped = Math.max(0, Math.min(rows.length - 1, index))
    const row = rows[clamped]
    if (!row) return
    setActiveId(row.id)
    virtualizer.scrollToIndex(clamped, { align: 'auto' })
  }

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1)
    const moves: Record<string, number> = {
      ArrowDown: active + 1,
      ArrowUp: active - 1,
      PageDown: active + page,
      PageUp: active - page,
      Home: 0,
      End: rows.length - 1,
    }
    const target = moves[event.key]
    if (target !== undefined) {
      event.preventDefault()
      moveTo(target)
      return
    }
    const row = rows[active]
    if (!row) return
    if (event.key === 'Enter') {
      event.preventDefault()
      openRun(row.id)
    } else if (event.key === ' ') {
      event.preventDefault()
      toggleRunChecked(row.id)
    }
  }

  // Stable, so the memoized rows are not drawn again for a new handler each render.
  const onRowClick = useCallback(
    (event: MouseEvent, row: RunListRow) => {
      setActiveId(row.id)
      if (event.ctrlKey || event.metaKey) toggleRunChecked(row.id)
      else openRun(row.id)
    },
    [openRun, toggleRunChecked],
  )

  const activeRow = rows[active]
  const rowCount =
    total === null || total.more ? rows.length + (next === null ? 0 : 1) : total.count
  return (
    <div
      className="runs-grid"
      role="grid"
      aria-label="Runs"
      aria-rowcount={rowCount + 1}
      aria-multiselectable="true"
      tabIndex={0}
      aria-activedescendant={activeRow ? rowDomId(activeRow.id) : undefined}
      onKeyDown={onKeyDown}
    >
      <div className="runs-head" role="row" aria-rowindex={1}>
        <span role="columnheader" className="runs-cell-check">
          <span className="visually-hidden">Compare</span>
        </span>
        <span role="columnheader">Status</span>
        <span role="columnheader">Prompt</span>
        <span role="columnheader">Model or flow</span>
        <span role="columnheader">Created</span>
        <span role="columnheader" className="runs-cell-number">
          Duration
        </span>
        <span role="columnheader" className="runs-cell-number">
          Cost
        </span>
        <span role="columnheader" className="runs-cell-outputs">
          <span className="visually-hidden">Outputs</span>
        </span>
      </div>
      <div className="runs-scroll" ref={scrollRef} data-testid="runs-scroll">
        <div className="runs-canvas" style={{ height: virtualizer.getTotalSize() }}>
          {items.map((item) => {
            const row = rows[item.index]
            if (!row) return null
            return (
              <RunRow
                key={item.key}
                row={row}
                index={item.index}
                start={item.start}
                active={item.index === active}
                checked={checked.includes(row.id)}
                onClick={onRowClick}
                onToggle={toggleRunChecked}
              />
            )
          })}
        </div>
      </div>
    </div>
  )
}
