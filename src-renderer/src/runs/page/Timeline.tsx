import type { Run } from '../../../../src-shared/api'
import { durationWords, spanMs, statusWords, timeWords } from './words'

/** Queued → started → finished, with the times the service recorded and the waits between. */
export function Timeline({ run }: { run: Run }) {
  const queued = run.queued_at ?? run.created_at
  const finishedLabel =
    run.status_code === 'failed' || run.status_code === 'canceled'
      ? statusWords(run.status_code)
      : 'Finished'
  const steps = [
    { label: 'Queued', at: queued, wait: null },
    { label: 'Started', at: run.started_at, wait: spanMs(queued, run.started_at) },
    {
      label: finishedLabel,
      at: run.completed_at,
      wait: spanMs(run.started_at ?? queued, run.completed_at),
    },
  ]
  return (
    <ol className="run-timeline" aria-label="Status timeline">
      {steps.map((step) => (
        <li
          key={step.label}
          className={`${step.at ? 'done' : 'pending'} ${step.label === 'Failed' ? 'failed' : ''}`}
        >
          <span className="run-timeline-dot" aria-hidden="true" />
          <span className="run-timeline-label">{step.label}</span>
          <span className="run-timeline-time">{step.at ? timeWords(step.at) : 'not yet'}</span>
          {step.wait !== null ? (
            <span className="run-timeline-wait muted">+{durationWords(step.wait)}</span>
          ) : null}
        </li>
      ))}
    </ol>
  )
}
