/**
 * A flow run that dies at a chosen moment of one of its dispatches, for the flow-level crash test
 * of `test/integration/executor-crash.test.ts`. Run with `node --import tsx`; the job comes as
 * JSON in argv[2] and the API key in ATELIER_TEST_KEY (never in argv, where `ps` would show it).
 *
 * It runs the whole flow with `runFlow` under the given flow run id, as `atelier run` does, with
 * the mirror synced first so the catalog is the one the app has. `point` is a runner dispatch
 * point or `request-sent` (the dispatch request reached the service and was answered, but the
 * process dies before the runner reads the answer). The process kills itself with SIGKILL the
 * `hit`-th time (from 0) the point comes, so no cleanup of ours runs; if it never comes, it
 * exits with code 3 so the test sees that the crash did not happen.
 */
import { openDatabases } from '../../src-main/db'
import {
  mirrorModels,
  onlineCatalog,
  RemoteRunner,
  runFlow,
  type FlowDocument,
} from '../../src-main/executor'
import type { DispatchPoint } from '../../src-main/executor/remote'
import { createServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'

interface Job {
  url: string
  orgId: string
  home: string
  profile: string
  flowRunId: string
  point: DispatchPoint | 'request-sent'
  hit: number
  flow: FlowDocument
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job
const apiKey = process.env.ATELIER_TEST_KEY ?? ''

let hits = 0
const die = (): void => {
  if (hits++ === job.hit) process.kill(process.pid, 'SIGKILL')
}

const isDispatch = (method: string, path: string) =>
  method === 'POST' && (/\/runs$/.test(path) || path === '/v1/batches')

const fetchThenDie: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  const url = new URL(input instanceof Request ? input.url : String(input))
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
  if (job.point === 'request-sent' && isDispatch(method, url.pathname)) die()
  return response
}

const databases = openDatabases(job.home)
const client = createServiceClient({
  baseUrl: job.url,
  apiKey,
  organizationId: job.orgId,
  retry: { baseDelayMs: 5, maxDelayMs: 50 },
  fetch: fetchThenDie,
})
await new SyncEngine({
  client,
  mirror: databases.mirror,
  profileName: job.profile,
  orgId: job.orgId,
  detailsLimit: 0,
}).syncAll({ collections: ['catalogs', 'models'] })

const runner = new RemoteRunner({
  client,
  ledger: databases.ledger,
  profile: job.profile,
  orgId: job.orgId,
  models: mirrorModels(databases.mirror, job.orgId),
  poll: { initialMs: 10, maxMs: 100 },
  onPoint: (point) => {
    if (point === job.point) die()
  },
})

await runFlow({
  flow: job.flow,
  runners: { model: runner },
  catalog: onlineCatalog({ mirror: databases.mirror, client, orgId: job.orgId }),
  ledger: databases.ledger,
  client,
  profile: job.profile,
  orgId: job.orgId,
  flowRunId: job.flowRunId,
  concurrency: 4,
})
databases.close()
process.exitCode = 3
