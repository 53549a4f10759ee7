import { useVirtualizer } from '@tanstack/react-virtual'
import { useRef } from 'react'
import type { RunLog } from '../../../../src-shared/api'
import type { RunLogLevel } from '../../../../src-shared/domain/run-page'
import { timeWords } from './words'

/** Below this many lines the log is drawn whole: cheaper than measuring, and simpler to read. */
const VIRTUAL_FROM = 300
const ROW_PX = 22

const FALLBACK_COLORS: Record<string, string> = {
  debug: '#8e8e99',
  info: '#3b82f6',
  warning: '#d97706',
  error: '#d32f2f',
}

function LogLine({ line, level }: { line: RunLog; level: RunLogLevel | undefined }) {
  const color = level?.color ?? FALLBACK_COLORS[line.level_code] ?? 'var(--muted)'
  return (
    <div className={`run-log-line level-${line.level_code}`}>
      <span className="run-log-time">{timeWords(line.created_at)}</span>
      <span className="run-log-level" style={{ color }}>
        {level?.name ?? line.level_code}
      </span>
      <span className="run-log-message">{line.message}</span>
    </div>
  )
}

function VirtualLines({ lines, levels }: { lines: RunLog[]; levels: Map<string, RunLogLevel> }) {
  const scroller = useRef<HTMLDivElement>(null)
  // The virtualizer hands out functions React Compiler cannot memoize; this list is its own.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtual = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 20,
  })
  return (
    <div ref={scroller} className="run-log-scroll virtual">
      <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
        {virtual.getVirtualItems().map((row) => {
          const line = lines[row.index]
          if (!line) return null
          return (
            <div
              key={line.id}
              data-index={row.index}
              ref={virtual.measureElement}
              style={{
                position: 'absolute',
                top: 0,
                left: 0,
                right: 0,
                translate: `0 ${row.start}px`,
              }}
            >
              <LogLine line={line} level={levels.get(line.level_code)} />
            </div>
          )
        })}
      </div>
    </div>
  )
}

/** The run's log, oldest first, coloured by the service's levels, with a level filter. */
export function Logs(props: {
  lines: RunLog[]
  levels: RunLogLevel[]
  hidden: string[]
  onHiddenChange: (codes: string[]) => void
  more: boolean
  onMore: () => void
}) {
  const { lines, levels, hidden, onHiddenChange, more, onMore } = props
  const byCode = new Map(levels.map((level) => [level.code, level]))
  const codes = levels.length > 0 ? levels.map((l) => l.code) : Object.keys(FALLBACK_COLORS)
  const shown = lines.filter((line) => !hidden.includes(line.level_code))
  const counts = new Map<string, number>()
  for (const line of lines) counts.set(line.level_code, (counts.get(line.level_code) ?? 0) + 1)
  return (
    <section className="card run-card run-logs" aria-labelledby="run-logs-title">
      <div className="card-head">
        <h2 id="run-logs-title">Log</h2>
        <div className="run-log-filter" role="group" aria-label="Log levels shown">
          {codes.map((code) => {
            const level = byCode.get(code)
            const on = !hidden.includes(code)
            return (
              <label key={code} className={on ? 'on' : ''}>
                <input
                  type="checkbox"
                  checked={on}
                  onChange={() => {
                    onHiddenChange(on ? [...hidden, code] : hidden.filter((c) => c !== code))
                  }}
                />
                <span
                  className="run-log-swatch"
                  style={{ background: level?.color ?? FALLBACK_COLORS[code] ?? 'var(--muted)' }}
                />
                {level?.name ?? code}
                <span className="muted">{counts.get(code) ?? 0}</span>
              </label>
            )
          })}
        </div>
      </div>
      {lines.length === 0 ? (
        <p className="muted run-empty">No log lines on this computer yet.</p>
      ) : shown.length === 0 ? (
        <p className="muted run-empty">Every line is hidden by the level filter.</p>
      ) : shown.length >= VIRTUAL_FROM ? (
        <VirtualLines lines={shown} levels={byCode} />
      ) : (
        <div className="run-log-scroll" role="log" aria-label="Log lines">
          {shown.map((line) => (
            <LogLine key={line.id} line={line} level={byCode.get(line.level_code)} />
          ))}
        </div>
      )}
      {more ? (
        <button type="button" className="link-button" onClick={onMore}>
          Show more lines
        </button>
      ) : null}
    </section>
  )
}
