import type { Run } from '../../../src-shared/api'
import type {
  RunDetail,
  RunFlowOrigin,
  RunLogLevel,
  RunLogPage,
} from '../../../src-shared/domain/run-page'
import type { Databases } from '../../db'
import { RunPageError } from './errors'

/** Lines per log page: what a screen shows many times over, and one small read. */
export const LOG_PAGE_LIMIT = 500

export interface RunScope {
  profile: string
  orgId: string
}

export function runNotFound(runId: string): RunPageError {
  return new RunPageError(
    'RUN_NOT_FOUND',
    `Run ${runId} is not on this computer and the service does not know it. Sync, or check that the run belongs to this organization.`,
  )
}

function logLevels(databases: Databases, scope: RunScope): RunLogLevel[] {
  return databases.mirror.catalogs.list({ orgId: scope.orgId }, 'runs/log-levels').map((r) => {
    const color = (r as { color?: unknown }).color
    return {
      code: r.code,
      name: r.display_name,
      color: typeof color === 'string' && /^#[0-9a-f]{3,8}$/i.test(color) ? color : null,
    }
  })
}

/**
 * The local flow run that dispatched a run: the executor puts its flow run and node in the
 * run's metadata, and the ledger keeps the flow run (with its flow) for as long as it lives.
 */
function flowOrigin(databases: Databases, scope: RunScope, run: Run): RunFlowOrigin | null {
  const metadata = run.metadata
  const flowRunId = metadata?.atelier_flow_run_id
  if (typeof flowRunId !== 'string') return null
  const flowRun = databases.ledger.flowRuns.get(flowRunId)
  if (!flowRun || flowRun.orgId !== scope.orgId) return null
  const local = databases.ledger.localFlows.get(scope, flowRun.flowId)
  const remote = local ? null : databases.mirror.flows.get({ orgId: scope.orgId }, flowRun.flowId)
  const nodeId = metadata?.atelier_node_id
  return {
    flowRunId,
    flowId: flowRun.flowId,
    flowName: local?.name ?? remote?.name ?? null,
    nodeId: typeof nodeId === 'string' ? nodeId : null,
  }
}

export function logPage(databases: Databases, runId: string, after: string | null): RunLogPage {
  const page = databases.mirror.runLogs.listForRun({ runId, limit: LOG_PAGE_LIMIT, after })
  return { items: page.items, next: page.next }
}

/** The run and what hangs off it, as the mirror holds them: small reads, each by index. */
export function readDetail(databases: Databases, scope: RunScope, runId: string): RunDetail {
  const { mirror } = databases
  const run = mirror.runs.get(runId)
  // Runs of another organization may share the mirror: they are not this page's to show.
  if (!run || run.org_id !== scope.orgId) throw runNotFound(runId)
  const fetched = mirror.runDetailsFetched.get(runId)
  return {
    run,
    nodeRuns: mirror.nodeRuns.listForRun(runId),
    logs: logPage(databases, runId, null),
    deliveries: mirror.callbackDeliveries.listForRun(runId),
    logLevels: logLevels(databases, scope),
    flow: flowOrigin(databases, scope, run),
    detailsFetched: fetched !== null,
    fetchedMs: fetched?.fetchedMs ?? null,
  }
}
