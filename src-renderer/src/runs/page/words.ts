import type { Run, RunStatusCode } from '../../../../src-shared/api'
import { codeWords } from '../../components/codeWords'

export const STATUS_WORDS: Record<RunStatusCode, string> = {
  queued: 'Queued',
  starting: 'Starting',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
}

/** A run's status in words, a status this version does not know included. */
export const statusWords = (status: string) => codeWords(STATUS_WORDS, status)

export const TERMINAL: readonly RunStatusCode[] = ['succeeded', 'failed', 'canceled']

export const isFinished = (status: RunStatusCode) => TERMINAL.includes(status)

/** What the run ran, in a line: the model, the flow or the workflow. */
export function targetWords(run: Run, flowName?: string | null): string {
  if (run.model_slug) return run.model_slug
  if (run.target_type_code === 'flow') return flowName ? `Flow ${flowName}` : 'Flow run'
  if (run.target_type_code === 'wfengine_workflow') return 'Workflow run'
  return 'Run'
}

const DATE = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})
const TIME = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})

export function dateWords(iso: string | null): string {
  if (iso === null) return '—'
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? DATE.format(ms) : iso
}

export function timeWords(iso: string | null): string {
  if (iso === null) return '—'
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? TIME.format(ms) : iso
}

/** "850 ms", "4.2 s", "1 min 05 s". */
export function durationWords(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const seconds = Math.round(ms / 1000)
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`
}

export function spanMs(from: string | null, to: string | null): number | null {
  if (from === null || to === null) return null
  const span = Date.parse(to) - Date.parse(from)
  return Number.isFinite(span) ? Math.max(0, span) : null
}

/** The service's decimal credits: "0.0205 credits", "free", "—". */
export function costWords(cost: string | null): string {
  if (cost === null) return '—'
  const value = Number(cost)
  if (!Number.isFinite(value)) return cost
  if (value === 0) return 'free'
  return `${value.toFixed(4)} credits`
}

interface FailureWords {
  title: string
  advice: string
}

/** A run's failure in plain words, by code, never by message; the message is shown beside it. */
const FAILURES: Record<string, FailureWords> = {
  INPUT_VALIDATION_FAILED: {
    title: 'The input was not accepted',
    advice: 'Correct the values named below, then run it again.',
  },
  INPUT_FETCH_FAILED: {
    title: 'An input image could not be loaded',
    advice: 'Check that the image still exists and can be reached, then run it again.',
  },
  MODEL_ERROR: {
    title: 'The model crashed',
    advice: 'This is usually temporary: re-run it. If it keeps failing, try other settings.',
  },
  MODEL_UNAVAILABLE: {
    title: 'The model is unavailable',
    advice: 'Try again later, or pick another model.',
  },
  SANDBOX_RESTARTED: {
    title: 'The sandbox restarted during the run',
    advice: 'Nothing was charged. Re-run it.',
  },
  TIMEOUT: {
    title: 'The run took too long',
    advice: 'Try smaller settings, or re-run it when the service is less busy.',
  },
  INSUFFICIENT_CREDIT: {
    title: 'Not enough credit',
    advice: 'Add credit to the organization, then run it again.',
  },
}

const STAGES: Record<string, string> = {
  preprocess: 'while checking the input',
  inference: 'during inference',
  postprocess: 'while storing the outputs',
}

export function failureWords(run: {
  failure_code: string | null
  failure_stage: string | null
}): FailureWords & { stage: string | null } {
  const known = run.failure_code ? FAILURES[run.failure_code] : undefined
  const stage = run.failure_stage ? (STAGES[run.failure_stage] ?? `at ${run.failure_stage}`) : null
  return {
    title: known?.title ?? 'The run failed',
    advice: known?.advice ?? 'Read the message and the log below, then re-run it.',
    stage,
  }
}

/** A parameter value in a cell: strings as they are, the rest as compact JSON. */
export function valueWords(value: unknown): string {
  if (value === undefined) return '—'
  if (typeof value === 'string') return value.startsWith('data:') ? 'embedded file' : value
  return JSON.stringify(value)
}
