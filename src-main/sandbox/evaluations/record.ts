import type { Evaluation } from '../../../src-shared/api'
import type { ImageRef } from './source'

export const COLLECTION = 'evaluations'

/** Credits per evaluation, in micro-credits: quick runs fewer judges and costs less. */
export const PRICE_MICRO = { standard: 10_000, quick: 4_000 } as const

export type JobClass = keyof typeof PRICE_MICRO

export const jobClassOf = (evaluation: Evaluation): JobClass =>
  evaluation.job_class_code === 'quick' ? 'quick' : 'standard'

export const isTerminal = (evaluation: Evaluation): boolean =>
  evaluation.status_code === 'completed' || evaluation.status_code === 'failed'

const ASSET_LINK = /^\/v1\/assets\/([0-9a-f-]{36})$/

/**
 * Paths (not URLs: the sandbox's port changes between starts) to what the evaluation is about.
 * An asset submission has no `generated_image_url`; its asset is named here, and this is also
 * where the life cycle finds it again after a restart.
 */
export function linksOf(
  id: string,
  related: { assetId?: string | null; runId?: string | null; parentId?: string | null },
): Record<string, string> {
  return {
    self: `/v1/evaluations/${id}`,
    feedback: `/v1/evaluations/${id}/feedback`,
    ...(related.assetId ? { asset: `/v1/assets/${related.assetId}` } : {}),
    ...(related.runId ? { run: `/v1/runs/${related.runId}` } : {}),
    ...(related.parentId ? { parent_evaluation: `/v1/evaluations/${related.parentId}` } : {}),
  }
}

/** The image an evaluation judges: its URL, or the asset its links name. */
export function imageRefOf(evaluation: Evaluation): ImageRef | null {
  if (evaluation.generated_image_url) return { url: evaluation.generated_image_url }
  const asset = evaluation.links?.asset
  const match = typeof asset === 'string' ? ASSET_LINK.exec(asset) : null
  return match?.[1] ? { assetId: match[1] } : null
}

/** A reference image as submitted: `{url}` or `{asset_id}`, with an optional description. */
export function referenceRefOf(reference: Record<string, unknown>): ImageRef | null {
  if (typeof reference.url === 'string') return { url: reference.url }
  if (typeof reference.asset_id === 'string') return { assetId: reference.asset_id }
  return null
}
