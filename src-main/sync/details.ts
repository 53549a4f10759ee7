import type { NodeRun, Run, RunCallbackDelivery, RunLog } from '../../src-shared/api'
import type { Mirror } from '../db'
import { isServiceError, type ServiceClient } from '../service'
import { listPages, prefetched, type ListPage } from './pages'

export const DETAILS_PAGE_LIMIT = 500

/** What fetching one run's details brought. */
export interface RunDetailsReport {
  runId: string
  nodeRuns: number
  logs: number
  callbackDeliveries: number
  /** Requests made (pages, the callback list, and the run itself when the mirror lacked it). */
  requests: number
  /** Rows the mirror wrote (a record already stored at the same or a newer version is not). */
  written: number
}

interface Context {
  client: ServiceClient
  mirror: Mirror
  signal?: AbortSignal | undefined
}

type LooseGet = (
  path: string,
  init: { params: { path: Record<string, string> }; signal?: AbortSignal },
) => Promise<unknown>

/**
 * A run's node runs, logs and callback deliveries, every page of each, each page written in its
 * own transaction (the repositories keep an older record from replacing a newer one). The run
 * itself is fetched first when the mirror does not hold it, since its children take its
 * organization. The marker that the details are current goes with the last write, at the run's
 * updated_at read before fetching: a run that changes meanwhile counts as changed next time.
 */
export async function fetchRunDetails(context: Context, runId: string): Promise<RunDetailsReport> {
  const { client, mirror, signal } = context
  const report: RunDetailsReport = {
    runId,
    nodeRuns: 0,
    logs: 0,
    callbackDeliveries: 0,
    requests: 0,
    written: 0,
  }
  const get = client.get as unknown as LooseGet
  const withSignal = signal ? { signal } : {}
  let runUpdatedMs = mirror.runDetailsFetched.runUpdatedMs(runId)
  if (runUpdatedMs === null) {
    const run = (await get('/v1/runs/{run_id}', {
      params: { path: { run_id: runId } },
      ...withSignal,
    })) as Run
    report.requests++
    mirror.transaction(() => mirror.runs.upsertPage([run]))
    runUpdatedMs = mirror.runDetailsFetched.runUpdatedMs(runId)
    if (runUpdatedMs === null) throw new Error(`Run ${runId} could not be written to the mirror.`)
  }

  const walk = async (list: 'node-runs' | 'logs', write: (items: unknown[]) => number) => {
    let count = 0
    const pages = listPages(
      client,
      `/v1/runs/${encodeURIComponent(runId)}/${list}`,
      { sort_by: 'created_at:asc', limit: DETAILS_PAGE_LIMIT },
      withSignal,
    )
    for await (const page of prefetched(pages, (p: ListPage) => p.next === null)) {
      report.requests++
      count += page.items.length
      if (page.items.length > 0) report.written += mirror.transaction(() => write(page.items))
    }
    return count
  }
  report.nodeRuns = await walk('node-runs', (items) =>
    mirror.nodeRuns.upsertPage(items as NodeRun[]),
  )
  report.logs = await walk('logs', (items) => mirror.runLogs.upsertPage(items as RunLog[]))

  const deliveries = (await get('/v1/runs/{run_id}/callback', {
    params: { path: { run_id: runId } },
    ...withSignal,
  })) as RunCallbackDelivery[]
  report.requests++
  report.callbackDeliveries = deliveries.length
  const fetchedAt = runUpdatedMs
  report.written += mirror.transaction(() => {
    const written = deliveries.length > 0 ? mirror.callbackDeliveries.upsertPage(deliveries) : 0
    mirror.runDetailsFetched.mark(runId, fetchedAt)
    return written
  })
  return report
}

/** The run is gone on the service: its tombstone will remove it here. */
export function isRunGone(error: unknown): boolean {
  return isServiceError(error) && error.status === 404
}

/**
 * Runs `work` over `items` with at most `concurrency` in flight. The first failure stops the
 * hand-out of new items; the ones in flight finish (each writes whole pages only) and the
 * failure is thrown.
 */
export async function eachBounded<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  const failures: unknown[] = []
  const worker = async () => {
    while (failures.length === 0 && next < items.length) {
      const item = items[next++] as T
      try {
        await work(item)
      } catch (error) {
        failures.push(error)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  if (failures.length > 0) throw failures[0]
}
