import { listElement } from '../../../src-shared/domain/flow'
import type { NodeRunState } from '../../../src-shared/domain/flow-run'
import type { SubFlowProgress } from './document'

/** Micro-credits as people read credits: "0.0205 credits", "free". */
export function creditsWords(micro: number | null | undefined): string {
  if (micro === null || micro === undefined) return 'price unknown'
  if (micro === 0) return 'free'
  return `${(micro / 1_000_000).toFixed(4)} credits`
}

/** "4 s", "1 min 05 s": how long a node has been running. */
/** A moment in a list of versions or runs: date and time, in the person's own words. */
export function momentWords(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

const NODE_KIND_WORDS: Record<string, string> = {
  model: 'Model',
  builtin: 'Built-in',
  wfengine_workflow: 'ComfyUI workflow',
  sub_flow: 'Flow',
}

/** What a node is, in words: a built-in says which ("save to assets"), the others their kind. */
export function nodeKindWords(node: {
  type_code: string
  builtin_node_code?: string | null
  subtitle?: string | null
}): string {
  if (node.subtitle) return node.subtitle
  if (node.type_code === 'builtin' && node.builtin_node_code) {
    return node.builtin_node_code.replaceAll('_', ' ')
  }
  return NODE_KIND_WORDS[node.type_code] ?? node.type_code.replaceAll('_', ' ')
}

export function elapsedWords(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`
}

export const NODE_STATE_WORDS: Record<NodeRunState, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Done',
  cached: 'Cached',
  skipped: 'Skipped',
  failed: 'Failed',
  canceled: 'Canceled',
}

/** The badge of a node whose result was made with other settings than the flow's now. */
export const STALE_WORDS = 'Out of date'
export const STALE_TITLE =
  'Made with earlier settings: run the flow again to bring this result up to date.'

/**
 * The colour family of a variable type, as a CSS class suffix: types that connect share a colour
 * (the families of `typeConnection`), and a list has its element's colour.
 */
export function typeFamily(type: string): string {
  const element = listElement(type) ?? type
  switch (element) {
    case 'text':
    case 'string':
    case 'enum':
      return 'text'
    case 'integer':
    case 'number':
    case 'seed':
      return 'number'
    case 'boolean':
    case 'image':
    case 'video':
      return element
    default:
      return 'other'
  }
}

/** "3/5 done · 1 failed · 1 running": a sub-flow node's inner nodes, in a line. */
export function subFlowWords(progress: SubFlowProgress): string {
  const parts = [
    progress.total === null ? `${progress.done} done` : `${progress.done}/${progress.total} done`,
  ]
  if (progress.failed > 0) parts.push(`${progress.failed} failed`)
  if (progress.running > 0) parts.push(`${progress.running} running`)
  return parts.join(' · ')
}

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS

/**
 * When a flow changed, the one way every place says it: "just now", "5 min ago", "3 h ago",
 * "yesterday", then "on Jan 1". A time at exactly midnight UTC is a date without a time (how
 * templates are dated): it is that calendar day everywhere, so it is read in UTC; read in local
 * time it became "Dec 31" west of Greenwich while the template says Jan 1.
 */
export function changedWords(at: number, now: number): string {
  const dateOnly = at % DAY_MS === 0
  const elapsed = Math.max(0, now - at)
  if (!dateOnly) {
    if (elapsed < 60_000) return 'just now'
    if (elapsed < HOUR_MS) return `${Math.floor(elapsed / 60_000)} min ago`
    if (elapsed < DAY_MS) return `${Math.floor(elapsed / HOUR_MS)} h ago`
    if (elapsed < 2 * DAY_MS) return 'yesterday'
  }
  const sameYear = new Date(at).getUTCFullYear() === new Date(now).getUTCFullYear()
  const date = new Date(at).toLocaleDateString('en-US', {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
    ...(dateOnly ? { timeZone: 'UTC' } : {}),
  })
  return `on ${date}`
}
