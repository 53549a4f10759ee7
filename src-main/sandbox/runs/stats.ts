import type { ModelStats } from '../../../src-shared/api'
import type { SandboxDb } from '../db'

/** The value below which `share` of the sorted values lie (nearest rank). */
function percentile(sorted: readonly number[], share: number): number | null {
  if (sorted.length === 0) return null
  const rank = Math.max(1, Math.ceil(share * sorted.length))
  return sorted[Math.min(sorted.length, rank) - 1] ?? null
}

/**
 * Run statistics of one model in one organization. `run_count` counts every run of the model
 * (in progress ones too); `success_rate` is succeeded / (succeeded + failed): a canceled run says
 * nothing about the model. Durations are those of succeeded runs (created to completed), what a
 * caller waits for a result. Fields are null when there is nothing to measure.
 */
export function modelStats(db: SandboxDb, orgId: string, modelId: string): ModelStats {
  // Runs keep their model as parent_id, so this walks the parent index instead of every run.
  const rows = db
    .prepare(
      `SELECT json_extract(doc, '$.status_code') AS status, json_extract(doc, '$.duration_ms') AS duration
         FROM records
        WHERE collection = 'runs' AND parent_id = ? AND org_id = ? AND deleted_at IS NULL`,
    )
    .all(modelId, orgId) as { status: string; duration: number | null }[]
  let succeeded = 0
  let failed = 0
  const durations: number[] = []
  for (const row of rows) {
    if (row.status === 'succeeded') {
      succeeded++
      if (typeof row.duration === 'number') durations.push(row.duration)
    } else if (row.status === 'failed') {
      failed++
    }
  }
  durations.sort((a, b) => a - b)
  const finished = succeeded + failed
  const total = durations.reduce((sum, value) => sum + value, 0)
  return {
    model_id: modelId,
    run_count: rows.length,
    success_rate: finished === 0 ? null : succeeded / finished,
    avg_duration_ms: durations.length === 0 ? null : Math.round(total / durations.length),
    p50_duration_ms: percentile(durations, 0.5),
    p95_duration_ms: percentile(durations, 0.95),
  }
}
