import { useEffect, useRef, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { FlowRunSummary } from '../../../src-shared/domain/flow-editor'
import { plural } from '../../../src-shared/domain/plural'
import { useAppStore } from '../store'
import { usePlacedUnder } from './placedUnder'
import { creditsWords, elapsedWords, momentWords } from './words'

const STATE_WORDS: Record<FlowRunSummary['state'], string> = {
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
}

/** How the run went, in one line: "2 nodes done · 1 failed · took 4 s · 0.0205 credits". */
function detailWords(run: FlowRunSummary): string {
  const counts = (
    [
      [run.done, 'done'],
      [run.cached, 'cached'],
      [run.failed, 'failed'],
    ] as const
  ).filter(([count]) => count > 0)
  // The noun once, with the first count: "2 nodes cached · 1 failed".
  const parts =
    counts.length === 0
      ? ['No node ran']
      : counts.map(([count, word], i) =>
          i === 0 ? `${plural(count, 'node')} ${word}` : `${count.toLocaleString('en-US')} ${word}`,
        )
  if (run.endedMs !== null) parts.push(`took ${elapsedWords(run.endedMs - run.startedMs)}`)
  parts.push(run.costMicro === 0 ? 'nothing charged' : creditsWords(run.costMicro))
  return parts.join(' · ')
}

/**
 * The open flow's runs on this computer, newest first: how each went, and Resume for one that
 * was interrupted (the same rule as the toolbar's Resume; the main process applies it, and to a
 * run Atelier stopped in the middle of too). A finished run's Show opens the run page of the
 * first run it made on the service. Read when opened, and again when a run ends while open.
 */
export function FlowRuns() {
  const { editorId, history, problem, runPhase, load, resumeRun, goTo, openRun } = useAppStore(
    useShallow((s) => ({
      editorId: s.editor?.id,
      history: s.flowRunHistory,
      problem: s.flowRunHistoryProblem,
      runPhase: s.runPhase,
      load: s.loadFlowRunHistory,
      resumeRun: s.resumeRun,
      goTo: s.goTo,
      openRun: s.openRun,
    })),
  )
  const [open, setOpen] = useState(false)
  const summary = useRef<HTMLElement>(null)
  const busy = runPhase === 'starting' || runPhase === 'running' || runPhase === 'canceling'

  useEffect(() => {
    if (open) void load()
  }, [open, load, runPhase, editorId])

  const place = usePlacedUnder(open, summary)

  if (editorId === undefined) return null
  return (
    <details
      className="versions flow-runs"
      data-testid="flow-runs"
      open={open}
      onKeyDown={(event) => {
        if (event.key !== 'Escape' || !open) return
        setOpen(false)
        summary.current?.focus()
      }}
      onToggle={(event) => {
        setOpen(event.currentTarget.open)
      }}
    >
      <summary ref={summary} className="small-button">
        Runs
      </summary>
      <div className="versions-panel" role="region" aria-label="Runs of this flow" style={place}>
        <strong>Runs of this flow</strong>
        {problem !== null ? (
          <p className="muted" role="alert">
            {problem}
          </p>
        ) : null}
        {history === null ? (
          problem === null ? (
            <p className="muted">Reading the runs…</p>
          ) : null
        ) : history.length === 0 ? (
          <p className="muted">No runs yet. Each run of this flow on this computer shows here.</p>
        ) : (
          <ul className="versions-list">
            {history.map((run) => (
              <li key={run.flowRunId} data-testid="flow-run" data-state={run.state}>
                <span>
                  <strong data-testid="flow-run-state">
                    {run.resumable ? 'Interrupted' : STATE_WORDS[run.state]}
                  </strong>
                  <span className="muted"> · {momentWords(run.startedMs)}</span>
                  <br />
                  <span className="muted" data-testid="flow-run-details">
                    {detailWords(run)}
                  </span>
                </span>
                {run.resumable ? (
                  <button
                    type="button"
                    className="link-button"
                    data-testid="flow-run-resume"
                    disabled={busy}
                    title="Continues where the run stopped; nothing is charged twice."
                    onClick={() => {
                      void resumeRun(run.flowRunId)
                    }}
                  >
                    Resume
                  </button>
                ) : run.state !== 'running' && run.firstRemoteRunId !== null ? (
                  <button
                    type="button"
                    className="link-button"
                    data-testid="flow-run-show"
                    title="Opens the run page of the first model run it made."
                    onClick={() => {
                      openRun(run.firstRemoteRunId ?? '')
                      goTo('runs')
                    }}
                  >
                    Show
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </div>
    </details>
  )
}
