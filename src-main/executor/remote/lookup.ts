import type { Run } from '../../../src-shared/api'
import type { Intent } from '../../db'
import type { ServiceClient } from '../../service'
import { isRecord } from './values'

interface LookupContext {
  client: ServiceClient
  orgId: string
  clock?: () => number
}

/** How far back of the intent's own time a batch's runs are searched: clocks disagree. */
const CLOCK_SKEW_MS = 60 * 60 * 1000
/** Runs read while searching for a batch before giving up (and sending with the same key). */
const MAX_SCANNED_RUNS = 20_000

const ourIntent = (run: Run, intent: Intent) =>
  isRecord(run.metadata) && run.metadata.atelier_intent_id === intent.id

/**
 * The run an intent's request created, if the service has it: runs are searched by their
 * `idempotency_key` (a scalar field, so the list's `q` takes it). When several answer (a
 * service that forgot the key and ran it again), the oldest is the one we keep.
 */
export async function findRun(ctx: LookupContext, intent: Intent): Promise<Run | null> {
  const page = await ctx.client.get('/v1/runs', {
    params: {
      query: {
        q: `idempotency_key=${JSON.stringify(intent.idempotencyKey)}`,
        sort_by: 'created_at:asc',
        limit: 10,
      },
    },
    headers: { 'X-Organization-Id': ctx.orgId },
  })
  return page.items.find((run) => ourIntent(run, intent)) ?? page.items[0] ?? null
}

/**
 * The batch an intent's request created, if the service has it. A batch carries neither the key
 * nor metadata of its own in the contract; its item runs carry the intent id in their metadata,
 * so the model's batch runs since the intent was made are read until one names the intent.
 */
export async function findBatchId(ctx: LookupContext, intent: Intent): Promise<string | null> {
  const from = Math.min(intent.createdMs, ctx.clock?.() ?? Date.now()) - CLOCK_SKEW_MS
  const since = new Date(from).toISOString().replace('Z', '+00:00')
  let scanned = 0
  for await (const run of ctx.client.list('/v1/runs', {
    params: {
      query: {
        q: `source_code=batch and model_slug=${JSON.stringify(intent.targetRef)} and created_at>=${JSON.stringify(since)}`,
        sort_by: 'created_at:asc',
        limit: 500,
      },
    },
    headers: { 'X-Organization-Id': ctx.orgId },
  })) {
    if (ourIntent(run, intent) && run.batch_id) return run.batch_id
    if (++scanned >= MAX_SCANNED_RUNS) break
  }
  return null
}
