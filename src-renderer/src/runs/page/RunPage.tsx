import { useCallback, useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { RunDetail } from '../../../../src-shared/domain/run-page'
import { useAppStore } from '../../store'
import { errorText } from '../../shell/errorWords'
import { Modal } from '../../shell/Modal'
import { OpenInEditor } from '../../shell/OpenInEditor'
import { matches } from '../../shell/shortcuts'
import { Deliveries } from './Deliveries'
import { Inputs } from './Inputs'
import { Logs } from './Logs'
import { findMedia } from './media'
import { NodeRuns } from './NodeRuns'
import { MediaStrip } from './Outputs'
import { Timeline } from './Timeline'
import {
  costWords,
  dateWords,
  durationWords,
  failureWords,
  isFinished,
  spanMs,
  statusWords,
  targetWords,
} from './words'
import './runPage.css'

export interface RunPageProps {
  runId: string
  onClose(): void
}

/** While the run or a delivery is under way, the page asks the service again this often. */
const POLL_MS = 2_000

function needsPolling(detail: RunDetail): boolean {
  if (!isFinished(detail.run.status_code)) return true
  return detail.deliveries.some((d) => ['pending', 'queued', 'processing'].includes(d.status_code))
}

/** The run of `runId` as the store holds it, loaded when the page opens, polled while unfinished. */
export function useRunEntry(runId: string) {
  const { entry, load, refresh } = useAppStore(
    useShallow((s) => ({
      entry: s.runPages[runId],
      load: s.runPageLoad,
      refresh: s.runPageRefresh,
    })),
  )
  useEffect(() => {
    void load(runId)
  }, [load, runId])
  const detail = entry?.detail ?? null
  const refreshing = entry?.refreshing ?? false
  useEffect(() => {
    if (!detail || refreshing || !needsPolling(detail)) return
    const timer = setTimeout(() => void refresh(runId), POLL_MS)
    return () => {
      clearTimeout(timer)
    }
  }, [detail, refreshing, refresh, runId])
  return entry
}

/** Esc goes back, unless a field or a dialog has it. */
function useBackKey(onBack: () => void) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!matches('close', event) || event.defaultPrevented) return
      const target = event.target
      if (
        target instanceof HTMLElement &&
        target.closest('input, textarea, select, [role="dialog"]')
      )
        return
      event.preventDefault()
      onBack()
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [onBack])
}

function RerunDialog({
  detail,
  onClose,
  onStarted,
}: {
  detail: RunDetail
  onClose: () => void
  onStarted: (runId: string) => void
}) {
  const rerun = useAppStore((s) => s.runPageRerun)
  // One key per confirmation: pressing twice, or a retry, starts (and charges) one run only.
  const [key] = useState(() => crypto.randomUUID())
  const [busy, setBusy] = useState<'same' | 'new' | null>(null)
  const { run } = detail
  // A failed or canceled run cost nothing (refunded): the estimate is what a new one holds.
  const price = run.cost !== null && Number(run.cost) > 0 ? run.cost : run.estimated_cost
  const seed = typeof run.input.seed === 'number' ? run.input.seed : null
  const start = (choice: 'same' | 'new') => {
    setBusy(choice)
    void rerun(run.id, key, choice).then((result) => {
      setBusy(null)
      if (typeof result === 'string') onStarted(result)
    })
  }
  return (
    <Modal label="Re-run" className="dialog run-dialog" onClose={onClose}>
      <h2>Re-run this run?</h2>
      <p>
        A new run starts with the same {run.model_slug ? 'model' : 'target'} and the same input. It
        is a run of its own, <strong>charged again</strong>
        {price !== null ? (
          <>
            : about <strong>{costWords(price)}</strong>
          </>
        ) : null}
        .
      </p>
      {seed !== null ? (
        <p className="muted" data-testid="rerun-seed">
          Re-run keeps the seed ({seed}), so the same picture comes back. New seed makes a different
          one. To reuse a flow&apos;s result without paying, run the flow again in the editor: a
          node whose inputs did not change comes from the cache.
        </p>
      ) : null}
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={onClose}>
          Cancel
        </button>
        {seed !== null ? (
          <button
            type="button"
            className="small-button"
            disabled={busy !== null}
            title="The same input with a newly drawn seed: a different picture, charged again."
            onClick={() => {
              start('new')
            }}
          >
            {busy === 'new' ? 'Starting…' : 'New seed and pay again'}
          </button>
        ) : null}
        <button
          type="button"
          className="small-button primary"
          disabled={busy !== null}
          title={
            seed !== null
              ? `The same input and seed ${seed}: the same picture, charged again.`
              : undefined
          }
          onClick={() => {
            start('same')
          }}
        >
          {busy === 'same' ? 'Starting…' : 'Re-run and pay again'}
        </button>
      </div>
    </Modal>
  )
}

function Failure({ detail }: { detail: RunDetail }) {
  const { run } = detail
  if (run.status_code !== 'failed') return null
  const words = failureWords(run)
  return (
    <section className="run-failure" role="alert" aria-labelledby="run-failure-title">
      <h2 id="run-failure-title">
        {words.title}
        {words.stage ? <span className="run-failure-stage"> {words.stage}</span> : null}
      </h2>
      {run.failure_message ? <p className="run-failure-message">{run.failure_message}</p> : null}
      <p className="run-failure-advice">{words.advice}</p>
      <p className="run-failure-code muted">
        {run.failure_code ?? 'no code'}
        {run.failure_stage ? ` · stage ${run.failure_stage}` : ''}
      </p>
    </section>
  )
}

function Header({
  detail,
  onBack,
  onRerun,
}: {
  detail: RunDetail
  onBack: () => void
  onRerun: () => void
}) {
  const { run, flow } = detail
  const { cancel, goTo, openFlow } = useAppStore(
    useShallow((s) => ({ cancel: s.runPageCancel, goTo: s.goTo, openFlow: s.openFlow })),
  )
  const [canceling, setCanceling] = useState(false)
  const finished = isFinished(run.status_code)
  const duration = run.duration_ms ?? spanMs(run.created_at, run.completed_at)
  return (
    <header className="run-header">
      <button type="button" className="small-button run-back" onClick={onBack}>
        ← Back <kbd>Esc</kbd>
      </button>
      <div className="run-title">
        <div className="run-title-line">
          <span className={`run-chip ${run.status_code}`}>{statusWords(run.status_code)}</span>
          <h2>{targetWords(run, flow?.flowName)}</h2>
        </div>
        <dl className="run-meta">
          <div>
            <dt>Created</dt>
            <dd>{dateWords(run.created_at)}</dd>
          </div>
          <div>
            <dt>Duration</dt>
            <dd>{finished ? durationWords(duration) : 'running…'}</dd>
          </div>
          <div>
            <dt>{run.cost === null ? 'Estimated cost' : 'Cost'}</dt>
            <dd>{costWords(run.cost ?? run.estimated_cost)}</dd>
          </div>
          {flow ? (
            <div>
              <dt>Flow</dt>
              <dd>{flow.flowName ?? flow.flowId.slice(0, 8)}</dd>
            </div>
          ) : null}
          <div>
            <dt>Run</dt>
            <dd className="run-id">{run.id}</dd>
          </div>
        </dl>
      </div>
      <div className="run-actions">
        {flow ? (
          <button
            type="button"
            className="small-button"
            onClick={() => {
              goTo('flows')
              void openFlow(flow.flowId)
            }}
          >
            Open flow
          </button>
        ) : null}
        {!finished ? (
          <button
            type="button"
            className="small-button danger"
            disabled={canceling}
            onClick={() => {
              setCanceling(true)
              void cancel(run.id).finally(() => {
                setCanceling(false)
              })
            }}
          >
            {canceling ? 'Canceling…' : 'Cancel run'}
          </button>
        ) : null}
        {finished && findMedia(run.output, 1).length > 0 ? (
          <OpenInEditor source={{ runId: run.id }} />
        ) : null}
        <button type="button" className="small-button" onClick={onRerun}>
          Re-run…
        </button>
      </div>
    </header>
  )
}

function RunView({
  runId,
  onBack,
  onRerunStarted,
}: {
  runId: string
  onBack: () => void
  onRerunStarted: (runId: string) => void
}) {
  const entry = useRunEntry(runId)
  const { hidden, setHidden, moreLogs, redeliver, verify } = useAppStore(
    useShallow((s) => ({
      hidden: s.runPageHiddenLevels,
      setHidden: s.setRunPageHiddenLevels,
      moreLogs: s.runPageMoreLogs,
      redeliver: s.runPageRedeliver,
      verify: s.runPageVerify,
    })),
  )
  const [rerunning, setRerunning] = useState(false)
  const detail = entry?.detail ?? null
  if (!detail) {
    return (
      <div className="run-page">
        <button type="button" className="small-button run-back" onClick={onBack}>
          ← Back <kbd>Esc</kbd>
        </button>
        {entry?.problem ? (
          <div className="banner error" role="alert">
            {errorText(entry.problem)}
          </div>
        ) : (
          <p className="muted" role="status">
            Opening the run…
          </p>
        )}
      </div>
    )
  }
  const { run } = detail
  const outputs = findMedia(run.output)
  return (
    <div className="run-page" aria-label="Run">
      <Header
        detail={detail}
        onBack={onBack}
        onRerun={() => {
          setRerunning(true)
        }}
      />
      {entry?.stale ? (
        <div className="banner warning run-stale" role="status">
          Showing the run as it was last synced. {errorText(entry.stale)}
        </div>
      ) : null}
      <div className="run-grid">
        <div className="run-main">
          <Failure detail={detail} />
          {outputs.length > 0 ? (
            <section className="card run-card" aria-labelledby="run-outputs-title">
              <div className="card-head">
                <h2 id="run-outputs-title">Outputs</h2>
                <span className="muted">click to zoom</span>
              </div>
              <MediaStrip
                media={outputs}
                label="Outputs"
                size={512}
                remix={(index) => ({ runId: run.id, index })}
              />
            </section>
          ) : null}
          <Inputs run={run} />
          <Logs
            lines={detail.logs.items}
            levels={detail.logLevels}
            hidden={hidden}
            onHiddenChange={setHidden}
            more={entry?.moreLogsNext != null}
            onMore={() => void moreLogs(runId)}
          />
        </div>
        <aside className="run-side">
          <section className="card run-card" aria-labelledby="run-timeline-title">
            <div className="card-head">
              <h2 id="run-timeline-title">Timeline</h2>
              {entry?.refreshing ? <span className="muted">updating…</span> : null}
            </div>
            <Timeline run={run} />
          </section>
          <Deliveries
            deliveries={detail.deliveries}
            callbackUrl={run.callback_url}
            finished={isFinished(run.status_code)}
            onRedeliver={async () => {
              await redeliver(runId)
            }}
            onVerify={(deliveryId, signature, secret, remember) =>
              verify({
                runId,
                deliveryId,
                signature,
                ...(secret === '' ? {} : { secret, remember }),
              })
            }
          />
          <NodeRuns nodes={detail.nodeRuns} logs={detail.logs.items} />
        </aside>
      </div>
      {rerunning ? (
        <RerunDialog
          detail={detail}
          onClose={() => {
            setRerunning(false)
          }}
          onStarted={(newRunId) => {
            setRerunning(false)
            onRerunStarted(newRunId)
          }}
        />
      ) : null}
    </div>
  )
}

/** One run's page: opened from the Runs list; Back (or Esc) returns to it. */
export function RunPage(props: RunPageProps) {
  const { runId } = props
  // A re-run started here is shown in place; Back returns to the run it came from.
  const [rerun, setRerun] = useState<{ from: string; to: string } | null>(null)
  const current = rerun?.from === runId ? rerun.to : runId
  const back = useCallback(() => {
    if (current === runId) props.onClose()
    else setRerun(null)
  }, [current, runId, props])
  useBackKey(back)
  return (
    <RunView
      key={current}
      runId={current}
      onBack={back}
      onRerunStarted={(to) => {
        setRerun({ from: runId, to })
      }}
    />
  )
}
