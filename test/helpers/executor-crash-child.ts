/**
 * A remote runner that dies at a chosen moment of a dispatch, for the crash test of
 * `test/integration/executor-remote.test.ts`. Run with `node --import tsx`; the job comes as JSON
 * in argv[2] and the API key in ATELIER_TEST_KEY (never in argv, where `ps` would show it).
 *
 * `point` is a runner dispatch point (`before-intent`, `intent-committed`, `sending-committed`,
 * `answered`) or `request-sent`: the dispatch request reached the service and was answered, but
 * the process dies before the runner reads the answer. The process kills itself with SIGKILL at
 * the `hit`-th time (from 0) the point comes, so no cleanup of ours runs; if it never comes, it
 * exits with code 3 so the test sees that the crash did not happen.
 */
import type { FlowNode } from '../../src-shared/api'
import { openDatabases } from '../../src-main/db'
import { RemoteRunner, type DispatchPoint } from '../../src-main/executor/remote'
import { createServiceClient } from '../../src-main/service'

interface Job {
  url: string
  orgId: string
  home: string
  flowRunId: string
  point: DispatchPoint | 'request-sent'
  hit: number
  nodes: { node: FlowNode; inputs: Record<string, unknown> }[]
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
const runner = new RemoteRunner({
  client,
  ledger: databases.ledger,
  profile: 'default',
  orgId: job.orgId,
  poll: { initialMs: 10, maxMs: 100 },
  onPoint: (point) => {
    if (point === job.point) die()
  },
})

await Promise.allSettled(
  job.nodes.map(({ node, inputs }) =>
    runner.run({
      flowRunId: job.flowRunId,
      node,
      inputs,
      attempt: 1,
      signal: new AbortController().signal,
      emit: () => undefined,
    }),
  ),
)
databases.close()
process.exitCode = 3
