/**
 * The Batches section, read from the mirror (issue 18's worked example of a review screen):
 * what `batches.list` and `batches.get` answer. Batches are mirrored whole in the mirror's
 * `records` table (`mirrored('batches', …)` in `sync/collections.ts`), so this reads them
 * back and shapes rows; it never calls the service, and answers the same offline.
 */
import type { Batch } from '../../../src-shared/api'
import type {
  BatchDetail,
  BatchErrorCode,
  BatchListPage,
  BatchRow,
} from '../../../src-shared/domain/batches'
import type { Mirror } from '../../db'
import { CodedError } from '../../errors/coded'

/** Bad input to the Batches section, with a stable code; nothing was read. */
export class BatchError extends CodedError<BatchErrorCode> {
  override readonly name = 'BatchError'
}

export interface BatchListRequest {
  limit?: number
  /** The `next` of the previous page. */
  cursor?: string
}

/** What the Batches section asks of the core. */
export interface BatchReview {
  /** Newest first, keyset-paged. */
  list: (request: BatchListRequest) => BatchListPage
  /** One batch with its items, each the run made for it. */
  get: (request: { id: string }) => BatchDetail
}

/**
 * The collection's name in the mirror, as registered in `sync/collections.ts`; its records are
 * the service's `Batch`, stored as they came.
 */
const COLLECTION = 'batches'

export class BatchesService implements BatchReview {
  constructor(
    private readonly mirror: Mirror,
    private readonly scope: { orgId: string },
  ) {}

  list({ limit, cursor }: BatchListRequest): BatchListPage {
    const where = { collection: COLLECTION, orgId: this.scope.orgId }
    let page
    try {
      page = this.mirror.records.list(where, { limit, after: cursor ?? null })
    } catch (error) {
      if (!(error instanceof TypeError)) throw error
      throw new BatchError(
        'BATCHES_INVALID_CURSOR',
        'This page of batches is out of date. Go back to the top of the list and scroll again.',
      )
    }
    return { items: (page.items as Batch[]).map(rowOf), next: page.next }
  }

  get({ id }: { id: string }): BatchDetail {
    const batch = this.mirror.records.get(
      { collection: COLLECTION, orgId: this.scope.orgId },
      id,
    ) as Batch | null
    if (batch === null) {
      throw new BatchError(
        'BATCH_NOT_FOUND',
        `There is no batch ${id} on this computer. Sync to fetch the newest batches, or pick one from the list.`,
      )
    }
    return {
      ...rowOf(batch),
      items: batch.items.map((item) => ({
        index: item.index,
        runId: item.run_id,
        status: item.status_code,
      })),
    }
  }
}

/** A batch has no name of its own: the one its metadata gives, else the model it ran. */
function rowOf(batch: Batch): BatchRow {
  const named = batch.metadata?.name
  return {
    id: batch.id,
    name: typeof named === 'string' && named.trim() !== '' ? named.trim() : batch.model_slug,
    modelSlug: batch.model_slug,
    status: batch.status_code,
    itemCount: batch.item_count,
    succeededCount: batch.succeeded_count,
    failedCount: batch.failed_count,
    canceledCount: batch.canceled_count,
    cost: batch.cost,
    createdAt: batch.created_at,
    completedAt: batch.completed_at,
  }
}
