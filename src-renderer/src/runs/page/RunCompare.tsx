import { useCallback, useEffect } from 'react'
import type { RunDetail } from '../../../../src-shared/domain/run-page'
import { plural } from '../../../../src-shared/domain/plural'
import { errorText } from '../../shell/errorWords'
import { matches } from '../../shell/shortcuts'
import { findMedia } from './media'
import { MediaStrip } from './Outputs'
import { useRunEntry } from './RunPage'
import {
  costWords,
  dateWords,
  durationWords,
  spanMs,
  statusWords,
  targetWords,
  valueWords,
} from './words'
import './runPage.css'

export interface RunCompareProps {
  runIds: [string, string]
  onClose(): void
}

interface Row {
  name: string
  left: string
  right: string
  changed: boolean
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** What sets two runs apart: the run's own facts, then every parameter either one had. */
export function compareRows(a: RunDetail, b: RunDetail): { facts: Row[]; params: Row[] } {
  // When a run was made and how long it took differ between any two runs: shown, never marked.
  const fact = (name: string, pick: (d: RunDetail) => string, compared = true): Row => {
    const left = pick(a)
    const right = pick(b)
    return { name, left, right, changed: compared && left !== right }
  }
  const facts = [
    fact('Target', (d) => targetWords(d.run, d.flow?.flowName)),
    fact('Status', (d) => statusWords(d.run.status_code)),
    fact('Created', (d) => dateWords(d.run.created_at), false),
    fact(
      'Duration',
      (d) => durationWords(d.run.duration_ms ?? spanMs(d.run.created_at, d.run.completed_at)),
      false,
    ),
    fact('Cost', (d) => costWords(d.run.cost ?? d.run.estimated_cost)),
  ]
  const names = [...new Set([...Object.keys(a.run.input), ...Object.keys(b.run.input)])].sort()
  const params = names.map((name) => {
    const left = a.run.input[name]
    const right = b.run.input[name]
    return { name, left: valueWords(left), right: valueWords(right), changed: !same(left, right) }
  })
  return { facts, params }
}

function DiffTable({ rows, caption }: { rows: Row[]; caption: string }) {
  return (
    <table className="run-diff">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Run A</th>
          <th scope="col">Run B</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.name} className={row.changed ? 'changed' : ''}>
            <th scope="row">
              {row.name}
              {row.changed ? <span className="run-diff-mark"> changed</span> : null}
            </th>
            <td>{row.left}</td>
            <td>{row.right}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** Two runs side by side: what differs in their parameters, and their outputs. */
export function RunCompare(props: RunCompareProps) {
  const { runIds } = props
  const left = useRunEntry(runIds[0])
  const right = useRunEntry(runIds[1])
  const back = useCallback(() => {
    props.onClose()
  }, [props])
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target
      if (!matches('close', event) || event.defaultPrevented) return
      if (target instanceof HTMLElement && target.closest('input, [role="dialog"]')) return
      event.preventDefault()
      back()
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [back])
  const a = left?.detail ?? null
  const b = right?.detail ?? null
  const problem = left?.problem ?? right?.problem ?? null
  return (
    <div className="run-page run-compare" aria-label="Compare runs">
      <header className="run-header">
        <button type="button" className="small-button run-back" onClick={back}>
          ← Back <kbd>Esc</kbd>
        </button>
        <div className="run-title">
          <div className="run-title-line">
            <h2>Compare two runs</h2>
          </div>
          <p className="muted">Changed values are highlighted.</p>
        </div>
      </header>
      {problem ? (
        <div className="banner error" role="alert">
          {errorText(problem)}
        </div>
      ) : null}
      {a && b ? (
        <CompareBody a={a} b={b} />
      ) : problem ? null : (
        <p className="muted" role="status">
          Opening the runs…
        </p>
      )}
    </div>
  )
}

function CompareBody({ a, b }: { a: RunDetail; b: RunDetail }) {
  const { facts, params } = compareRows(a, b)
  const changed = params.filter((row) => row.changed).length
  return (
    <>
      <section className="card run-card">
        <div className="card-head">
          <h2>Parameters</h2>
          <span className="muted">
            {changed === 0
              ? 'the same input'
              : `${changed} of ${plural(params.length, 'parameter')} ${changed === 1 ? 'differs' : 'differ'}`}
          </span>
        </div>
        <DiffTable rows={facts} caption="The runs" />
        <DiffTable rows={params} caption="Input parameters" />
      </section>
      <section className="card run-card">
        <div className="card-head">
          <h2>Outputs</h2>
        </div>
        <div className="run-compare-outputs">
          {[a, b].map((detail, index) => {
            const media = findMedia(detail.run.output)
            const label = index === 0 ? 'Run A outputs' : 'Run B outputs'
            return (
              <div key={detail.run.id}>
                <h3>
                  {index === 0 ? 'Run A' : 'Run B'}{' '}
                  <span className={`run-chip small ${detail.run.status_code}`}>
                    {statusWords(detail.run.status_code)}
                  </span>
                </h3>
                {media.length > 0 ? (
                  <MediaStrip media={media} label={label} size={512} />
                ) : (
                  <p className="muted">
                    No outputs{detail.run.failure_code ? `: ${detail.run.failure_code}` : ''}.
                  </p>
                )}
              </div>
            )
          })}
        </div>
      </section>
    </>
  )
}
