import { z } from 'zod'

/**
 * The Batches section (issue 18's worked example of a review screen): what `batches.list` and
 * `batches.get` take and answer. Read from the mirror only, so it answers the same offline.
 * Runtime-free apart from zod.
 */

export const BATCH_LIST_LIMIT_DEFAULT = 50
export const BATCH_LIST_LIMIT_MAX = 500

export const batchListQuerySchema = z.strictObject({
  limit: z.number().int().min(1).max(BATCH_LIST_LIMIT_MAX).default(BATCH_LIST_LIMIT_DEFAULT),
  /** The `next` of the previous page; left out for the first. */
  cursor: z.string().min(1).max(200).optional(),
})

export const batchIdSchema = z.strictObject({ id: z.string().trim().min(1).max(200) })

export type BatchListQuery = z.input<typeof batchListQuerySchema>

export type BatchStatusCode =
  'queued' | 'running' | 'succeeded' | 'partial_succeeded' | 'failed' | 'canceled'

/** One row of the list: what fits on a line. */
export interface BatchRow {
  id: string
  /** What to call it: the name its metadata gives, else the model it ran. */
  name: string
  modelSlug: string
  status: BatchStatusCode
  itemCount: number
  succeededCount: number
  failedCount: number
  canceledCount: number
  /** Decimal credits, as the service wrote them; null before anything was charged. */
  cost: string | null
  /** ISO 8601, as the service wrote it. */
  createdAt: string
  completedAt: string | null
}

export interface BatchListPage {
  /** Newest first. */
  items: BatchRow[]
  /** Pass back as `cursor` for the next page; null on the last one. */
  next: string | null
}

/** One item of a batch: the run made for it. */
export interface BatchItemRow {
  index: number
  runId: string
  /** A run's status (queued, running, succeeded, failed, canceled…), as the service wrote it. */
  status: string
}

export interface BatchDetail extends BatchRow {
  items: BatchItemRow[]
}

export type BatchErrorCode = 'BATCH_NOT_FOUND' | 'BATCHES_INVALID_CURSOR'
