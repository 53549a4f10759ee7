import { isoTime } from '../clock'
import {
  isTerminalRunStatus,
  type Batch,
  type BatchCallbackPayload,
  type EventType,
  type Run,
  type RunCallbackPayload,
  type TerminalRunStatus,
} from './records'

/** Event names use the UK `cancelled`; the status they carry keeps the US `canceled`. */
export const RUN_EVENTS: Record<TerminalRunStatus, EventType> = {
  succeeded: 'run.completed',
  failed: 'run.failed',
  canceled: 'run.cancelled',
}

const BATCH_TERMINAL = ['succeeded', 'partial_succeeded', 'failed', 'canceled'] as const
type BatchTerminalStatus = (typeof BATCH_TERMINAL)[number]

const CALLBACK_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?\+00:00$/
const UTC_Z_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/**
 * A payload timestamp: ISO 8601 with `+00:00`, never `Z`, as the spec requires so that receivers
 * re-serialising the body still verify the signature. Keeps the stored precision where it can.
 */
export function callbackTime(value: string | null | undefined, fallbackMs: number): string {
  if (value && CALLBACK_TIME.test(value)) return value
  if (value && UTC_Z_TIME.test(value)) return `${value.slice(0, -1)}+00:00`
  const ms = value ? Date.parse(value) : Number.NaN
  return isoTime(Number.isNaN(ms) ? fallbackMs : ms)
}

function elapsedMs(from: string, to: string): number {
  const ms = Date.parse(to) - Date.parse(from)
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0
}

/** The error envelope of a failed run, as the callback `output` carries it. */
export function failureEnvelope(run: Run | undefined): Record<string, unknown> {
  return {
    code: run?.failure_code ?? 'RUN_FAILED',
    message: run?.failure_message ?? 'The run failed without saying why.',
    errors: null,
  }
}

function outputOf(status: TerminalRunStatus, run: Run | undefined): Record<string, unknown> | null {
  if (status === 'succeeded') return run?.output ?? null
  if (status === 'failed') return failureEnvelope(run)
  return null
}

/** The run callback payload, or null while the run is not terminal (nothing is sent then). */
export function runPayload(run: Run, nowMs: number): RunCallbackPayload | null {
  const status = run.status_code
  if (!isTerminalRunStatus(status)) return null
  const createdAt = callbackTime(run.created_at, nowMs)
  const completedAt = callbackTime(run.completed_at ?? run.updated_at, nowMs)
  const recorded = run.duration_ms
  return {
    event: RUN_EVENTS[status],
    run_id: run.id,
    status,
    output: outputOf(status, run),
    duration_ms:
      typeof recorded === 'number' && Number.isInteger(recorded) && recorded >= 0
        ? recorded
        : elapsedMs(createdAt, completedAt),
    created_at: createdAt,
    completed_at: completedAt,
    metadata: run.metadata,
  }
}

function isBatchTerminal(status: string): status is BatchTerminalStatus {
  return (BATCH_TERMINAL as readonly string[]).includes(status)
}

/**
 * The batch callback payload, or null while the batch is not terminal. The event list has no
 * "batch failed" or "batch cancelled", so every batch that did not fully succeed (failed items,
 * canceled items, a failed or canceled batch) sends `run.partial_succeeded`; its `status` and
 * counts say which. An item whose run never finished counts as cancelled: it never will.
 */
export function batchPayload(
  batch: Batch,
  runOf: (runId: string) => Run | undefined,
  nowMs: number,
): BatchCallbackPayload | null {
  if (!isBatchTerminal(batch.status_code)) return null
  const items = [...batch.items]
    .sort((a, b) => a.index - b.index)
    .map((item) => {
      const run = runOf(item.run_id)
      const status: TerminalRunStatus =
        run && isTerminalRunStatus(run.status_code)
          ? run.status_code
          : isTerminalRunStatus(item.status_code)
            ? item.status_code
            : 'canceled'
      return { index: item.index, run_id: item.run_id, status, output: outputOf(status, run) }
    })
  const count = (status: TerminalRunStatus) => items.filter((i) => i.status === status).length
  const succeeded = count('succeeded')
  const createdAt = callbackTime(batch.created_at, nowMs)
  const completedAt = callbackTime(batch.completed_at ?? batch.updated_at, nowMs)
  return {
    event:
      items.length > 0 && succeeded === items.length ? 'batch.succeeded' : 'run.partial_succeeded',
    batch_id: batch.id,
    status: batch.status_code,
    output: {
      items,
      succeeded,
      failed: count('failed'),
      cancelled: count('canceled'),
      total: items.length,
    },
    duration_ms: elapsedMs(createdAt, completedAt),
    created_at: createdAt,
    completed_at: completedAt,
    metadata: batch.metadata,
  }
}

/**
 * Freezes a payload: the exact string that is signed and sent, and the object that string
 * parses to (what the delivery record shows as `payload`).
 */
export function freeze<P>(payload: P): { bytes: string; payload: P } {
  const bytes = JSON.stringify(payload)
  return { bytes, payload: JSON.parse(bytes) as P }
}
