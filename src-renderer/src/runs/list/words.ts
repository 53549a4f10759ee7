import type { RunStatusCode } from '../../../../src-shared/api'
import type { RunListTotal } from '../../../../src-shared/domain/runs-list'
import { codeWords } from '../../components/codeWords'

const count = new Intl.NumberFormat()

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

/** "1.2 s", "3 min 05 s", "—" while it has not ended. */
export function durationWords(ms: number | null): string {
  if (ms === null) return '—'
  if (ms < 1000) return `${String(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const seconds = Math.round(ms / 1000)
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${String(minutes)} min ${String(seconds % 60).padStart(2, '0')} s`
  return `${String(Math.floor(minutes / 60))} h ${String(minutes % 60).padStart(2, '0')} min`
}

/** Credits as the service wrote them, trimmed to what a column shows: "0.0420". */
export function costWords(cost: string | null): string {
  if (cost === null) return '—'
  const value = Number(cost)
  return Number.isFinite(value) ? value.toFixed(4) : cost
}

const sameDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const sameYear = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
})
const otherYear = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
})
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' })

/** Today: "14:05"; this year: "Mar 3, 14:05"; before: "Mar 3, 2025". */
export function createdWords(ms: number, now = Date.now()): string {
  const date = new Date(ms)
  const today = new Date(now)
  if (date.toDateString() === today.toDateString()) return `Today ${sameDay.format(date)}`
  if (date.getFullYear() === today.getFullYear()) return sameYear.format(date)
  return otherYear.format(date)
}

export function createdTitle(ms: number): string {
  return full.format(new Date(ms))
}

/** "1,234 runs", "More than 10,000 runs", "1 run". */
export function totalWords(total: RunListTotal | null, loaded: number): string {
  if (total === null) return `${count.format(loaded)} runs`
  if (total.more) return `More than ${count.format(total.count)} runs`
  return total.count === 1 ? '1 run' : `${count.format(total.count)} runs`
}

/** A date field's value (a local day) as epoch ms at its start; null when empty. */
export function dayStartMs(value: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!match) return null
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])).getTime()
}

/** Epoch ms back to a date field's value (the local day it falls in). */
export function dayValue(ms: number | null): string {
  if (ms === null) return ''
  const date = new Date(ms)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${String(date.getFullYear())}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** A date field's value as epoch ms at the start of the next day: "up to" includes that day. */
export function dayEndMs(value: string): number | null {
  const start = dayStartMs(value)
  if (start === null) return null
  const date = new Date(start)
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + 1).getTime()
}
