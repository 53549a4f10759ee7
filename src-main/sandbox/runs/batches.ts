import type { Batch, BatchCreate, Run } from '../../../src-shared/api'
import { formatCredits } from '../accounts'
import { requireCallbackSecret } from '../deliveries/secrets'
import { conflict, SandboxError } from '../errors'
import { decimalToMicro, estimateCost, microToDecimal } from '../models'
import type { SandboxServices } from '../services'
import type { RunEngine } from './engine'
import { IdempotencyKeys, fingerprintOf } from './idempotency'
import { requireCatalogModel } from './model-target'
import { isTerminal, type StoredRun } from './types'

/**
 * Batches: one model on many inputs in one request, one run per item (`source_code: batch`,
 * `batch_id` set, no callback of its own), one callback for the whole batch.
 *
 * - Charging: every item's run holds its own estimate as any run does; the batch is refused up
 *   front (402 INSUFFICIENT_CREDIT, nothing created) when the balance cannot cover the sum.
 * - Items: `items[i].status_code` follows its run through every status, in the very transaction
 *   that changes the run, and so do the counts and `cost` (the sum of the costs of the items
 *   finished so far, final once the batch is).
 * - Status: queued until one item's run leaves queued, then running. Once every item is
 *   terminal: canceled if the batch was canceled; succeeded if every item succeeded;
 *   partial_succeeded if some did and some did not; canceled if every item was canceled (one by
 *   one); failed otherwise (no item succeeded, at least one failed).
 * - Cancel: cancels every unfinished run (refunding its hold); the batch ends canceled at once.
 *   409 CONFLICT when the batch is already terminal.
 * - `batch.finished` fires once, after the change that made the batch terminal is committed.
 */

const COLLECTION = 'batches'
const IDEMPOTENCY_SCOPE = 'batches'

interface BatchInternals {
  callback_secret_id: string | null
  cost_micro: number
  cancel_requested: boolean
}

export type StoredBatch = Batch & { _sandbox: BatchInternals }

const TERMINAL: ReadonlySet<string> = new Set([
  'succeeded',
  'partial_succeeded',
  'failed',
  'canceled',
])

export const isBatchTerminal = (status: string): boolean => TERMINAL.has(status)

/** A stored batch as the API answers it: internals dropped. */
export function presentBatch(stored: Partial<StoredBatch>): Batch {
  const { _sandbox: _internals, ...batch } = stored
  return batch as Batch
}

function finalStatus(batch: StoredBatch): Batch['status_code'] {
  if (batch._sandbox.cancel_requested) return 'canceled'
  if (batch.succeeded_count === batch.item_count) return 'succeeded'
  if (batch.succeeded_count > 0) return 'partial_succeeded'
  if (batch.canceled_count === batch.item_count) return 'canceled'
  return 'failed'
}

export class Batches {
  private readonly idempotency: IdempotencyKeys
  /** Runs whose finish made their batch terminal: `batch.finished` waits for their commit. */
  private readonly finishing = new Map<string, { orgId: string; batchId: string }>()
  private readonly onRunFinished = (orgId: string, run: Run) => {
    this.announce(orgId, run.id)
  }

  constructor(
    private readonly services: SandboxServices,
    private readonly engine: RunEngine,
  ) {
    this.idempotency = new IdempotencyKeys(services.db, IDEMPOTENCY_SCOPE)
    engine.observe((orgId, run) => {
      this.follow(orgId, run)
    })
    services.events.on('run.finished', this.onRunFinished)
  }

  stop(): void {
    this.services.events.off('run.finished', this.onRunFinished)
    this.finishing.clear()
  }

  require(orgId: string, batchId: string): StoredBatch {
    return this.services.store.require<StoredBatch>(COLLECTION, batchId, orgId, 'The batch')
  }

  /**
   * Creates the batch and dispatches its runs in one transaction, or answers the batch first
   * made with this Idempotency-Key and request (`replayed`).
   */
  create(
    orgId: string,
    body: BatchCreate,
    idempotency: { key: string | null; fingerprint: unknown },
  ): { batch: Batch; replayed: boolean } {
    const { store, accounts } = this.services
    const model = requireCatalogModel(body.model)
    requireCallbackSecret(store, orgId, body.callback_secret_id)
    const key = idempotency.key
    const fingerprint = key ? fingerprintOf(idempotency.fingerprint) : ''
    return store.transaction(() => {
      if (key) {
        const earlier = this.idempotency.find(orgId, key, fingerprint)
        if (earlier) return { batch: presentBatch(this.require(orgId, earlier)), replayed: true }
      }
      const estimate = body.items.reduce(
        (sum, item) => sum + estimateCost(model, item.input).micro,
        0,
      )
      const balance = accounts.balance(orgId).balance_micro
      if (estimate > balance) {
        throw new SandboxError(
          402,
          'INSUFFICIENT_CREDIT',
          `This batch of ${body.items.length} runs of ${model.slug} costs an estimated ${microToDecimal(estimate)} credits but the balance is ${formatCredits(balance)} credits. Top up the balance or send fewer items, then create the batch again.`,
        )
      }
      const id = store.newId()
      const items = body.items.map((item, index) => {
        const { run } = this.engine.dispatch(orgId, {
          target: { type: 'model', model: model.slug },
          input: item.input,
          metadata: item.metadata ?? null,
          source_code: 'batch',
          batch_id: id,
        })
        return { index, run_id: run.id, status_code: run.status_code }
      })
      const now = store.now()
      const batch: StoredBatch = {
        id,
        org_id: orgId,
        model_slug: model.slug,
        status_code: 'queued',
        item_count: items.length,
        succeeded_count: 0,
        failed_count: 0,
        canceled_count: 0,
        items,
        callback_url: body.callback_url ?? null,
        metadata: body.metadata ?? null,
        cost: microToDecimal(0),
        created_at: now,
        updated_at: now,
        completed_at: null,
        _sandbox: {
          callback_secret_id: body.callback_secret_id ?? null,
          cost_micro: 0,
          cancel_requested: false,
        },
      }
      store.insert(COLLECTION, orgId, batch, model.id)
      if (key) this.idempotency.remember(orgId, key, fingerprint, id, now)
      return { batch: presentBatch(batch), replayed: false }
    })
  }

  /** Cancels the unfinished runs of a batch; the batch ends canceled. */
  cancel(orgId: string, batchId: string): Batch {
    const { store } = this.services
    const batch = this.require(orgId, batchId)
    if (isBatchTerminal(batch.status_code)) {
      throw conflict(
        `The batch already finished (${batch.status_code}); only a queued or running batch can be canceled.`,
      )
    }
    store.update<StoredBatch>(COLLECTION, batchId, orgId, (current) => ({
      ...current,
      _sandbox: { ...current._sandbox, cancel_requested: true },
    }))
    for (const item of batch.items) {
      if (isTerminal(item.status_code)) continue
      try {
        this.engine.cancel(orgId, item.run_id)
      } catch (error) {
        // A run that finished meanwhile keeps its outcome; the rest are still canceled.
        if (!(error instanceof SandboxError && error.status === 409)) throw error
      }
    }
    return presentBatch(this.require(orgId, batchId))
  }

  /** Brings the batch of a run in step with the run; called inside the run's transaction. */
  private follow(orgId: string, run: StoredRun): void {
    if (!run.batch_id) return
    const { store } = this.services
    // Straight reads and writes of the row: this runs at every status change of every item.
    const row = store
      .prepared(
        `SELECT doc FROM records WHERE collection = ? AND id = ? AND org_id = ? AND deleted_at IS NULL`,
      )
      .get(COLLECTION, run.batch_id, orgId) as { doc: string } | undefined
    if (!row) return
    const batch = JSON.parse(row.doc) as StoredBatch
    if (isBatchTerminal(batch.status_code)) return
    const item = batch.items.find((candidate) => candidate.run_id === run.id)
    if (!item || item.status_code === run.status_code) return
    item.status_code = run.status_code
    if (isTerminal(run.status_code)) {
      batch._sandbox.cost_micro += run.cost === null ? 0 : decimalToMicro(run.cost)
    }
    const count = (status: string) => batch.items.filter((i) => i.status_code === status).length
    batch.succeeded_count = count('succeeded')
    batch.failed_count = count('failed')
    batch.canceled_count = count('canceled')
    batch.cost = microToDecimal(batch._sandbox.cost_micro)
    const now = store.now()
    if (batch.items.every((i) => isTerminal(i.status_code))) {
      batch.status_code = finalStatus(batch)
      batch.completed_at = now
      this.finishing.set(run.id, { orgId, batchId: batch.id })
    } else if (batch.items.some((i) => i.status_code !== 'queued')) {
      batch.status_code = 'running'
    }
    batch.updated_at = now
    store
      .prepared(
        `UPDATE records SET doc = ?, updated_at = ? WHERE collection = ? AND id = ? AND org_id = ?`,
      )
      .run(JSON.stringify(batch), now, COLLECTION, batch.id, orgId)
  }

  /** Fires `batch.finished` for the batch the finished run completed, now that it is committed. */
  private announce(orgId: string, runId: string): void {
    const pending = this.finishing.get(runId)
    if (!pending || pending.orgId !== orgId) return
    this.finishing.delete(runId)
    const batch = this.services.store.get<StoredBatch>(COLLECTION, pending.batchId, orgId)
    // A change rolled back after all leaves the batch unfinished: nothing to announce.
    if (!batch || !isBatchTerminal(batch.status_code)) return
    this.services.events.emit('batch.finished', orgId, presentBatch(batch))
  }
}
