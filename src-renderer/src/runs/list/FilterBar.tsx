import { useEffect, useState, type RefObject } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { RunStatusCode } from '../../../../src-shared/api'
import { RUN_STATUSES } from '../../../../src-shared/domain/search'
import { shortcutHint } from '../../shell/shortcuts'
import { useAppStore } from '../../store'
import { NO_RUN_FILTERS, type RunFilters } from '../../store/runs'
import { dayEndMs, dayStartMs, dayValue, STATUS_WORDS } from './words'

/** Typing pauses this long before the list is asked again: one query per word, not per key. */
export const SEARCH_DEBOUNCE_MS = 250
const CREDITS = /^(?:\d+(?:\.\d*)?|\.\d+)$/

function filtered(filters: RunFilters): boolean {
  return (Object.keys(NO_RUN_FILTERS) as (keyof RunFilters)[]).some((key) =>
    key === 'statuses'
      ? filters.statuses.length > 0
      : key === 'text' || key === 'minCost' || key === 'maxCost'
        ? filters[key].trim() !== ''
        : filters[key] !== null,
  )
}

/** The search field: what is typed shows at once, the list follows once typing pauses. */
function SearchField({ inputRef }: { inputRef: RefObject<HTMLInputElement | null> }) {
  const text = useAppStore((s) => s.runFilters.text)
  const setRunFilters = useAppStore((s) => s.setRunFilters)
  const [draft, setDraft] = useState(text)
  const [shown, setShown] = useState(text)
  // Filters cleared elsewhere (the empty state's button): the field follows.
  if (shown !== text) {
    setShown(text)
    setDraft(text)
  }
  useEffect(() => {
    if (draft === text) return
    const timer = setTimeout(() => {
      void setRunFilters({ text: draft })
    }, SEARCH_DEBOUNCE_MS)
    return () => {
      clearTimeout(timer)
    }
  }, [draft, text, setRunFilters])
  return (
    <div className="runs-search">
      <svg viewBox="0 0 24 24" width="15" height="15" aria-hidden="true">
        <circle cx="11" cy="11" r="6.5" fill="none" stroke="currentColor" strokeWidth="2" />
        <path d="M16 16l4.5 4.5" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
      </svg>
      <input
        ref={inputRef}
        type="search"
        aria-label="Search runs"
        placeholder="Search prompts, or paste a run id"
        value={draft}
        onChange={(event) => {
          setDraft(event.target.value)
        }}
        onKeyDown={(event) => {
          if (event.key === 'Escape' && draft !== '') {
            event.preventDefault()
            setDraft('')
          }
        }}
      />
      <kbd className="runs-search-hint">{shortcutHint('runs.search')}</kbd>
    </div>
  )
}

/** A credits bound: sent when it is a number, marked invalid otherwise. */
function CostField({ label, field }: { label: string; field: 'minCost' | 'maxCost' }) {
  const value = useAppStore((s) => s.runFilters[field])
  const setRunFilters = useAppStore((s) => s.setRunFilters)
  const [draft, setDraft] = useState(value)
  const [shown, setShown] = useState(value)
  if (shown !== value) {
    setShown(value)
    setDraft(value)
  }
  const valid = draft.trim() === '' || CREDITS.test(draft.trim())
  const commit = () => {
    if (valid && draft.trim() !== value.trim()) void setRunFilters({ [field]: draft.trim() })
  }
  return (
    <input
      className="runs-cost"
      type="text"
      inputMode="decimal"
      aria-label={label}
      placeholder={field === 'minCost' ? 'min' : 'max'}
      aria-invalid={!valid}
      title={valid ? label : 'Write an amount of credits, such as 0.05'}
      value={draft}
      onChange={(event) => {
        setDraft(event.target.value)
      }}
      onBlur={commit}
      onKeyDown={(event) => {
        if (event.key === 'Enter') commit()
      }}
    />
  )
}

/** Status, model, flow, dates and cost: every change asks the mirror for the new list. */
export function FilterBar({ searchRef }: { searchRef: RefObject<HTMLInputElement | null> }) {
  const { filters, options, setRunFilters, clearRunFilters } = useAppStore(
    useShallow((s) => ({
      filters: s.runFilters,
      options: s.runFilterOptions,
      setRunFilters: s.setRunFilters,
      clearRunFilters: s.clearRunFilters,
    })),
  )
  const toggleStatus = (status: RunStatusCode) => {
    const statuses = filters.statuses.includes(status)
      ? filters.statuses.filter((other) => other !== status)
      : [...filters.statuses, status]
    void setRunFilters({ statuses })
  }
  return (
    <div className="runs-filters" role="search" aria-label="Filter runs">
      <SearchField inputRef={searchRef} />
      <div className="runs-status-filter" role="group" aria-label="Status">
        {RUN_STATUSES.map((status) => (
          <button
            key={status}
            type="button"
            className={`status-toggle status-${status}`}
            aria-pressed={filters.statuses.includes(status)}
            onClick={() => {
              toggleStatus(status)
            }}
          >
            <span className="status-dot" aria-hidden="true" />
            {STATUS_WORDS[status]}
          </button>
        ))}
      </div>
      <div className="runs-filter-row">
        <select
          aria-label="Model"
          value={filters.model ?? ''}
          onChange={(event) => {
            void setRunFilters({ model: event.target.value === '' ? null : event.target.value })
          }}
        >
          <option value="">All models</option>
          {options?.models.map((model) => (
            <option key={model.slug} value={model.slug}>
              {model.name}
            </option>
          ))}
          {filters.model !== null &&
          options?.models.some((model) => model.slug === filters.model) !== true ? (
            <option value={filters.model}>{filters.model}</option>
          ) : null}
        </select>
        <select
          aria-label="Flow"
          value={filters.flowId ?? ''}
          disabled={options !== null && options.flows.length === 0 && filters.flowId === null}
          onChange={(event) => {
            void setRunFilters({ flowId: event.target.value === '' ? null : event.target.value })
          }}
        >
          <option value="">All flows</option>
          {options?.flows.map((flow) => (
            <option key={flow.id} value={flow.id}>
              {flow.name}
            </option>
          ))}
        </select>
        <label className="runs-field">
          <span>From</span>
          <input
            type="date"
            aria-label="Created from"
            value={dayValue(filters.fromMs)}
            onChange={(event) => {
              void setRunFilters({ fromMs: dayStartMs(event.target.value) })
            }}
          />
        </label>
        <label className="runs-field">
          <span>To</span>
          <input
            type="date"
            aria-label="Created up to"
            value={filters.toMs === null ? '' : dayValue(filters.toMs - 1)}
            onChange={(event) => {
              void setRunFilters({ toMs: dayEndMs(event.target.value) })
            }}
          />
        </label>
        <span className="runs-field">
          <span>Cost</span>
          <CostField label="Cost at least (credits)" field="minCost" />
          <span className="muted">–</span>
          <CostField label="Cost at most (credits)" field="maxCost" />
        </span>
        {filtered(filters) ? (
          <button
            type="button"
            className="link-button runs-clear"
            onClick={() => {
              void clearRunFilters()
            }}
          >
            Clear filters
          </button>
        ) : null}
      </div>
    </div>
  )
}

export { filtered as hasRunFilters }
