import { useEffect, useRef } from 'react'
import { NODE_LOG_LIMIT, type NodeLogLine } from '../document'

/**
 * The node's latest log lines in the run, oldest first (the last one is also on the node), kept
 * scrolled to the newest as lines come in.
 */
export function NodeLog({ lines }: { lines: readonly NodeLogLine[] }) {
  const list = useRef<HTMLOListElement>(null)
  useEffect(() => {
    const element = list.current
    if (element) element.scrollTop = element.scrollHeight
  }, [lines])
  if (lines.length === 0) return null
  return (
    <div className="inspector-log">
      <h3>Log</h3>
      {lines.length >= NODE_LOG_LIMIT ? (
        <p className="muted">The latest {NODE_LOG_LIMIT} lines.</p>
      ) : null}
      <ol ref={list} className="node-log-lines" aria-label="Log lines" data-testid="node-log-lines">
        {lines.map((line, index) => (
          // Lines have no id and only ever leave from the top: the position is the line.
          <li key={index} className={`node-log-line ${line.level}`} data-level={line.level}>
            <span className="node-log-level">{line.level}</span> {line.message}
          </li>
        ))}
      </ol>
    </div>
  )
}
