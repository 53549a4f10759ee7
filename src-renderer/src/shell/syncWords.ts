import type { SyncProgressStatus } from '../../../src-shared/domain/sync'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** "just now", "2 min ago", "3 h ago", "yesterday", then the date: short enough for the sidebar. */
export function ago(at: number, now: number): string {
  const elapsed = Math.max(0, now - at)
  if (elapsed < MINUTE) return 'just now'
  if (elapsed < HOUR) return `${Math.floor(elapsed / MINUTE)} min ago`
  if (elapsed < DAY) return `${Math.floor(elapsed / HOUR)} h ago`
  if (elapsed < 2 * DAY) return 'yesterday'
  return `on ${new Date(at).toLocaleDateString(undefined, { day: 'numeric', month: 'short' })}`
}

/** "in 30 s", "in 4 min": when the next try is. */
export function inTime(at: number, now: number): string {
  const wait = Math.max(0, at - now)
  if (wait < MINUTE) return `in ${Math.max(1, Math.round(wait / 1000))} s`
  return `in ${Math.round(wait / MINUTE)} min`
}

/** The sync's collection codes in the user's words: `asset-folders` → "asset folders". */
export function collectionWords(collection: string): string {
  return collection.replaceAll('-', ' ')
}

const count = new Intl.NumberFormat()

export function progressWords(progress: SyncProgressStatus): string {
  const done = count.format(progress.done)
  return progress.total === undefined ? done : `${done} / ${count.format(progress.total)}`
}
