import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, bench, describe } from 'vitest'
import type { FlowNode, Run } from '../../src-shared/api'
import { openDatabases } from '../../src-main/db'
import {
  BuiltinRunner,
  mirrorDurations,
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  planFlow,
  RemoteRunner,
  runFlow,
  type FlowDocument,
  type FlowRunResult,
  type NodeRunner,
} from '../../src-main/executor'
import { MediaStore } from '../../src-main/media-store'
import { createServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'

/**
 * The flow runner on a random DAG against the sandbox on loopback, printed as ratios against
 * bounds measured in the same run (nothing here is a timed assertion).
 *
 * The graph: NODES model nodes (`atelier/text-to-image` at 64×64, whose nominal work is a
 * constant 305 ms, so every run takes 305 × LATENCY_MS / 300 ms at the sandbox), each with 1–3
 * upstream model nodes picked by a seeded PRNG among the earlier ones. No model takes several
 * images, so each model node's prompt comes from a `prompt_template` node (its "join") that takes
 * the upstream images as inputs, which makes them dependencies, and fills `n<i>.{a}` with the
 * prompt of its first upstream node, so an edit travels down first-upstream chains as new text.
 * Joins are local nodes, so the flow has 2 × NODES nodes; both kinds hold a global slot.
 *
 * Figures:
 * - makespan ÷ max(critical path, total work ÷ concurrency), work and path from the sandbox's
 *   own timing of each run (completed_at − created_at) plus each join's measured runner time;
 * - orchestration overhead per node: from the moment the engine could have started a node (its
 *   last upstream node's runner call returned, or, when every slot was taken then, the last
 *   runner return before its start) to the engine calling its runner. It covers committing the
 *   upstream node's state, events, input resolution, the cache key and the node run's record;
 *   it leaves out the runner's own wait (dispatch request, polling);
 * - the poll lag: runner return − the sandbox's completed_at, the part of a node's time that is
 *   the runner's polling, to say where the rest of the makespan goes;
 * - an unchanged re-run (dispatches 0) and a re-run after editing one join's template:
 *   dispatched ÷ nodes whose inputs the edit changes (worked out here from the graph), with the
 *   plan's structural downstream count alongside.
 *
 * ATELIER_BENCH_NODES (default 500) makes it smaller while developing.
 */

const NODES = Number(process.env.ATELIER_BENCH_NODES ?? 500)
// The sandbox's nominal latency: a text-to-image run of ~0.3 s, quick for a real model.
const LATENCY_MS = 300
const CONCURRENCY = 16
const SEED = 20_261_121
const PROFILE = 'bench'

/** mulberry32: small, seeded, good enough to pick edges. */
function prng(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

interface Dag {
  /** Upstream model indexes of each model node; the first one feeds the prompt's text. */
  parents: number[][]
}

function randomDag(size: number, seed: number): Dag {
  const random = prng(seed)
  const parents: number[][] = []
  for (let i = 0; i < size; i++) {
    const want = Math.min(i, 1 + Math.floor(random() * 3))
    const picked = new Set<number>()
    while (picked.size < want) picked.add(Math.floor(random() * i))
    parents.push([...picked])
  }
  return { parents }
}

interface Built {
  flow: FlowDocument
  joinIds: string[]
  modelIds: string[]
}

/** Ids the contract takes (uuids) that still say what they name: kind, then the node's index. */
const KIND = { join: 1, model: 2, joinOut: 3, modelOut: 4 } as const
const uid = (kind: keyof typeof KIND, i: number) =>
  `0000000${KIND[kind]}-0000-4000-8000-${String(i).padStart(12, '0')}`
const nameOf = (id: string): string =>
  `${id.startsWith('00000001') ? 'join' : 'model'}-${Number(id.slice(-12))}`

function buildFlow(
  dag: Dag,
  modelId: string,
  edited: ReadonlySet<number> = new Set(),
  salt = 0,
): Built {
  const flowId = randomUUID()
  const joinIds = dag.parents.map((_, i) => uid('join', i))
  const modelIds = dag.parents.map((_, i) => uid('model', i))
  const port = (name: string, type: string, fields: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    name,
    variable_type_code: type,
    source_output_id: null,
    value: null,
    ...fields,
  })
  const nodes: unknown[] = []
  dag.parents.forEach((parents, i) => {
    const [first] = parents
    const text = `n${i}${edited.has(i) ? 'e' : ''}${salt > 0 ? `s${salt}` : ''}.`
    nodes.push({
      id: joinIds[i],
      label: `join ${i}`,
      slug: `join-${i}`,
      type_code: 'builtin',
      builtin_node_code: 'prompt_template',
      config: {},
      inputs: [
        port('template', 'text', { value: first === undefined ? text : `${text}{a}` }),
        ...(first === undefined
          ? []
          : [port('a', 'text', { source_output_id: uid('joinOut', first) })]),
        ...parents.map((parent, k) =>
          port(`d${k}`, 'image', { source_output_id: uid('modelOut', parent) }),
        ),
      ],
      outputs: [{ id: uid('joinOut', i), name: 'prompt', variable_type_code: 'text' }],
    })
    nodes.push({
      id: modelIds[i],
      label: `model ${i}`,
      slug: `model-${i}`,
      type_code: 'model',
      model_id: modelId,
      config: {},
      inputs: [
        port('prompt', 'text', { source_output_id: uid('joinOut', i) }),
        port('width', 'integer', { value: 64 }),
        port('height', 'integer', { value: 64 }),
        port('seed', 'seed', { value: salt * 1_000_000 + i }),
      ],
      outputs: [{ id: uid('modelOut', i), name: 'image', variable_type_code: 'image' }],
    })
  })
  const parsed = parseFlowDocument({
    id: flowId,
    name: `Executor bench ${flowId.slice(0, 8)}`,
    inputs: [],
    outputs: [],
    nodes,
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 5)))
  return { flow: parsed.flow, joinIds, modelIds }
}

/** Which nodes get new inputs when the joins in `edited` change their template. */
function changedByEdit(dag: Dag, edited: ReadonlySet<number>): Set<string> {
  const textChanged: boolean[] = []
  const changed = new Set<string>()
  dag.parents.forEach((parents, i) => {
    const first = parents[0]
    const firstText = first !== undefined && (textChanged[first] ?? false)
    const imageChanged = parents.some((parent) => changed.has(`model-${parent}`))
    textChanged[i] = edited.has(i) || firstText
    if (edited.has(i) || firstText || imageChanged) changed.add(`join-${i}`)
    if (textChanged[i]) changed.add(`model-${i}`)
  })
  return changed
}

interface Span {
  start: number
  end: number
}

/** Delegates to a runner, noting when the engine called it and when it answered, per node id. */
function timed(runner: NodeRunner, spans: Map<string, Span>): NodeRunner {
  const wrapped: NodeRunner & { loadModels?: (nodes: FlowNode[]) => Promise<void> } = {
    run: async (context) => {
      const span = { start: performance.now(), end: Number.NaN }
      spans.set(context.node.id, span)
      try {
        return await runner.run(context)
      } finally {
        span.end = performance.now()
      }
    },
  }
  if (runner.estimate) wrapped.estimate = runner.estimate.bind(runner)
  const loader = (runner as { loadModels?: (nodes: FlowNode[]) => Promise<void> }).loadModels
  if (typeof loader === 'function') wrapped.loadModels = loader.bind(runner)
  return wrapped
}

/**
 * The makespan of an ideal run of the graph: every node takes exactly its measured duration,
 * starts the instant it is ready and a slot is free, and waiting nodes get slots longest chain
 * first (by duration, as the engine ranks them). No schedule of this kind does better on this
 * graph, so it tells what the graph's shape costs against max(critical path, work ÷ slots),
 * apart from what the engine and the network add.
 */
function simulatedSchedule(
  ids: readonly string[],
  upstream: ReadonlyMap<string, readonly string[]>,
  weight: (id: string) => number,
  slots: number,
): number {
  const downstream = new Map<string, string[]>(ids.map((id) => [id, []]))
  const waitingOn = new Map<string, number>()
  for (const id of ids) {
    const ups = upstream.get(id) ?? []
    waitingOn.set(id, ups.length)
    for (const up of ups) downstream.get(up)?.push(id)
  }
  const tail = new Map<string, number>()
  const tailOf = (id: string): number => {
    let known = tail.get(id)
    if (known === undefined) {
      known = weight(id) + Math.max(0, ...(downstream.get(id) ?? []).map(tailOf))
      tail.set(id, known)
    }
    return known
  }
  for (const id of ids) tailOf(id)
  const ready = ids.filter((id) => waitingOn.get(id) === 0)
  const running: { id: string; end: number }[] = []
  let now = 0
  let makespan = 0
  while (ready.length > 0 || running.length > 0) {
    ready.sort((a, b) => (tail.get(b) ?? 0) - (tail.get(a) ?? 0))
    while (running.length < slots && ready.length > 0) {
      const id = ready.shift() as string
      running.push({ id, end: now + weight(id) })
    }
    running.sort((a, b) => a.end - b.end)
    const done = running.shift()
    if (!done) break
    now = done.end
    makespan = Math.max(makespan, now)
    for (const next of downstream.get(done.id) ?? []) {
      const left = (waitingOn.get(next) ?? 0) - 1
      waitingOn.set(next, left)
      if (left === 0) ready.push(next)
    }
  }
  return makespan
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}
const ms = (value: number) => `${value.toFixed(2)} ms`

const home = mkdtempSync(join(tmpdir(), 'atelier-executor-bench-'))
const report: string[] = []

afterAll(() => {
  rmSync(home, { recursive: true, force: true })
  console.log(`\nExecutor: ${NODES}-node random DAG (seed ${SEED})\n${report.join('\n')}\n`)
})

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

interface ChildSandbox {
  url: string
  orgId: string
  key: string
  close: () => Promise<void>
}

/**
 * The sandbox in a process of its own, as the service is: in this one its run timers and HTTP
 * handling would share the event loop with the engine and count as orchestration. No contract
 * check of each answer, for the same reason. The key comes back over a pipe, never a file.
 */
async function startChildSandbox(): Promise<ChildSandbox> {
  const script = [
    `const { startSandbox } = await import(${JSON.stringify(join(root, 'src-main', 'sandbox', 'index.ts'))})`,
    `const s = await startSandbox({ latencyMs: ${LATENCY_MS} })`,
    `process.stdout.write(JSON.stringify({ url: s.url, orgId: s.orgId, key: s.keys.admin }) + '\\n')`,
    `process.stdin.on('end', () => void s.close().then(() => process.exit(0)))`,
    `process.stdin.resume()`,
  ].join('\n')
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => {
      resolve()
    })
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
  for await (const line of createInterface({ input: child.stdout })) {
    const started = JSON.parse(line) as Omit<ChildSandbox, 'close'>
    return {
      ...started,
      close: async () => {
        child.stdin.end()
        await exited
        clearTimeout(timer)
      },
    }
  }
  clearTimeout(timer)
  throw new Error('The sandbox process ended before it listened.')
}

async function benchmark(): Promise<void> {
  const sandbox = await startChildSandbox()
  const dbs = openDatabases(home)
  const media = new MediaStore({ dir: join(home, 'media'), maxBytes: 64 * 1024 * 1024 })
  try {
    const client = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.key,
      retry: { baseDelayMs: 5, maxDelayMs: 50 },
    })
    await new SyncEngine({
      client,
      mirror: dbs.mirror,
      profileName: PROFILE,
      orgId: sandbox.orgId,
      detailsLimit: 0,
    }).syncAll({ collections: ['catalogs', 'models'] })
    const model = dbs.mirror.models.withSlug({ orgId: sandbox.orgId }, 'atelier/text-to-image')
    if (!model) throw new Error('The sandbox has no atelier/text-to-image.')
    const catalog = onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId })
    const spans = new Map<string, Span>()
    const runners = {
      model: timed(
        new RemoteRunner({
          client,
          ledger: dbs.ledger,
          profile: PROFILE,
          orgId: sandbox.orgId,
          models: mirrorModels(dbs.mirror, sandbox.orgId),
          durations: mirrorDurations(dbs.mirror, sandbox.orgId),
        }),
        spans,
      ),
      builtin: timed(
        new BuiltinRunner({
          media,
          service: client,
          polling: { initialMs: 20, maxMs: 200, timeoutMs: 60_000 },
        }),
        spans,
      ),
    }
    const eventAt = new Map<string, number>()
    const run = (flow: FlowDocument, concurrency = CONCURRENCY): Promise<FlowRunResult> =>
      runFlow({
        onEvent: (event) => {
          if ('nodeId' in event)
            eventAt.set(`${event.type} ${nameOf(event.nodeId)}`, performance.now())
        },
        flow,
        runners,
        catalog,
        ledger: dbs.ledger,
        client,
        profile: PROFILE,
        orgId: sandbox.orgId,
        concurrency,
      })

    const dag = randomDag(NODES, SEED)
    /** A first run of the graph (nothing cached), at `concurrency`; `salt` makes its seeds new. */
    const firstRun = async (concurrency: number, salt: number): Promise<Built> => {
      spans.clear()
      eventAt.clear()
      const built = buildFlow(dag, model.id, new Set(), salt)

      const began = performance.now()
      const first = await run(built.flow, concurrency)
      const ended = performance.now()
      if (first.state !== 'succeeded') throw new Error(`First run: ${JSON.stringify(first.error)}`)

      const runs: Run[] = []
      for await (const item of client.list('/v1/runs', { params: { query: { limit: 500 } } })) {
        const meta = item.metadata as { atelier_flow_run_id?: string } | null
        if (meta?.atelier_flow_run_id === first.flowRunId) runs.push(item)
      }
      if (runs.length !== NODES)
        throw new Error(`Expected ${NODES} runs, the sandbox has ${runs.length}.`)
      const serviceMs = new Map<string, { created: number; completed: number }>()
      for (const item of runs) {
        const nodeId = (item.metadata as { atelier_node_id: string }).atelier_node_id
        serviceMs.set(nameOf(nodeId), {
          created: Date.parse(item.created_at),
          completed: Date.parse(item.completed_at ?? item.created_at),
        })
      }

      const span = (id: string): Span => {
        const found = spans.get(
          uid(id.startsWith('join') ? 'join' : 'model', Number(id.split('-')[1])),
        )
        if (!found) throw new Error(`No runner call was seen for ${id}.`)
        return found
      }
      const weight = (id: string): number => {
        const remote = serviceMs.get(id)
        if (remote) return remote.completed - remote.created
        const local = span(id)
        return local.end - local.start
      }
      const allIds = [...built.joinIds, ...built.modelIds].map(nameOf)
      const totalWork = allIds.reduce((sum, id) => sum + weight(id), 0)
      const upstream = new Map<string, string[]>()
      dag.parents.forEach((parents, i) => {
        const first = parents[0]
        upstream.set(`join-${i}`, [
          ...(first === undefined ? [] : [`join-${first}`]),
          ...parents.map((parent) => `model-${parent}`),
        ])
        upstream.set(`model-${i}`, [`join-${i}`])
      })
      const finish = new Map<string, number>()
      dag.parents.forEach((_, i) => {
        for (const id of [`join-${i}`, `model-${i}`]) {
          const before = Math.max(0, ...(upstream.get(id) ?? []).map((up) => finish.get(up) ?? 0))
          finish.set(id, before + weight(id))
        }
      })
      const criticalPath = Math.max(...finish.values())
      const bound = Math.max(criticalPath, totalWork / concurrency)
      const ideal = simulatedSchedule(allIds, upstream, weight, concurrency)
      const makespan = ended - began
      const starts = allIds.map((id) => span(id).start)
      const ends = allIds.map((id) => span(id).end)
      const dispatchPhase = Math.max(...ends) - Math.min(...starts)

      // When a slot was free: a node that found every slot (global, or of its model) taken when it
      // was queued got one at a runner return, at the latest the last one before it started.
      const returns = ends.slice().sort((a, b) => a - b)
      const busyAt = (t: number, ids: readonly string[]) =>
        ids.reduce((n, id) => (span(id).start <= t && t < span(id).end ? n + 1 : n), 0)
      const modelNames = built.modelIds.map(nameOf)
      const overhead = { join: [] as number[], model: [] as number[] }
      for (const id of allIds) {
        const ups = upstream.get(id) ?? []
        if (ups.length === 0) continue
        const { start } = span(id)
        const ready = Math.max(...ups.map((up) => span(up).end))
        const queued = eventAt.get(`node-queued ${id}`) ?? ready
        const isModel = id.startsWith('model')
        let free = ready
        if (
          busyAt(queued, allIds) >= concurrency ||
          (isModel && busyAt(queued, modelNames) >= concurrency)
        ) {
          const last = returns.filter((t) => t <= start).pop()
          free = Math.max(ready, last ?? ready)
        }
        overhead[isModel ? 'model' : 'join'].push(start - free)
      }
      const both = [...overhead.join, ...overhead.model]
      // The engine's own steps around a runner call, free of any waiting for a slot.
      const beforeCall = allIds.map(
        (id) => span(id).start - (eventAt.get(`node-running ${id}`) ?? Number.NaN),
      )
      const readyOf = (id: string) =>
        Math.max(...(upstream.get(id) ?? []).map((up) => span(up).end))
      const withUpstream = allIds.filter((id) => (upstream.get(id) ?? []).length > 0)
      const readyToQueued = withUpstream.map(
        (id) => (eventAt.get(`node-queued ${id}`) ?? Number.NaN) - readyOf(id),
      )
      const queuedToRunning = allIds.map(
        (id) =>
          (eventAt.get(`node-running ${id}`) ?? Number.NaN) -
          (eventAt.get(`node-queued ${id}`) ?? Number.NaN),
      )
      const afterReturn = allIds.map(
        (id) => (eventAt.get(`node-succeeded ${id}`) ?? Number.NaN) - span(id).end,
      )
      const origin = performance.timeOrigin
      const pollLag = modelNames.map((id) => {
        const remote = serviceMs.get(id)
        return origin + span(id).end - (remote?.completed ?? Number.NaN)
      })
      const remoteSpan = modelNames.map((id) => span(id).end - span(id).start)
      const joinSpan = built.joinIds.map(nameOf).map((id) => span(id).end - span(id).start)
      const runnerOverService = modelNames.map((id) => {
        const remote = serviceMs.get(id)
        return span(id).end - span(id).start - ((remote?.completed ?? 0) - (remote?.created ?? 0))
      })

      report.push(
        `  first run: ${first.totals.dispatched} nodes dispatched (${NODES} model runs, ${NODES} joins), concurrency ${concurrency}, sandbox latencyMs ${LATENCY_MS}, default polling`,
        `  makespan (runFlow call → return)  ${ms(makespan)}`,
        `  dispatch phase (first runner call → last runner return)  ${ms(dispatchPhase)}`,
        `  critical path ${ms(criticalPath)}, total work ${ms(totalWork)} ÷ ${concurrency} = ${ms(totalWork / concurrency)}`,
        `  makespan ÷ lower bound = ${(makespan / bound).toFixed(3)} (target ≤ 1.05); dispatch phase ÷ lower bound = ${(dispatchPhase / bound).toFixed(3)}`,
        `  the same graph and durations list-scheduled with no overhead at all (longest chain first, ${concurrency} slots): ${ms(ideal)} = ${(ideal / bound).toFixed(3)} × the lower bound; makespan ÷ that schedule = ${(makespan / ideal).toFixed(3)}`,
        `  orchestration overhead per node: p50 ${ms(quantile(both, 0.5))}, p95 ${ms(quantile(both, 0.95))} (target ≤ 2 ms), max ${ms(Math.max(...both))}`,
        `    model nodes p95 ${ms(quantile(overhead.model, 0.95))}, joins p95 ${ms(quantile(overhead.join, 0.95))}`,
        `    last upstream runner return → node-queued event p50 ${ms(quantile(readyToQueued, 0.5))}, p95 ${ms(quantile(readyToQueued, 0.95))}; node-queued → node-running (cache look-up, node run record, waiting for a model and a global slot) p50 ${ms(quantile(queuedToRunning, 0.5))}, p95 ${ms(quantile(queuedToRunning, 0.95))}`,
        `    node-running event → runner call p50 ${ms(quantile(beforeCall, 0.5))}, p95 ${ms(quantile(beforeCall, 0.95))}; runner return → node-succeeded event p50 ${ms(quantile(afterReturn, 0.5))}, p95 ${ms(quantile(afterReturn, 0.95))}`,
        `  model node in the runner: p50 ${ms(quantile(remoteSpan, 0.5))}, p95 ${ms(quantile(remoteSpan, 0.95))}; of which beyond the sandbox's own run time p50 ${ms(quantile(runnerOverService, 0.5))}, p95 ${ms(quantile(runnerOverService, 0.95))}; poll lag after completed_at p50 ${ms(quantile(pollLag, 0.5))}, p95 ${ms(quantile(pollLag, 0.95))}`,
        `  join (prompt_template) in the runner: p50 ${ms(quantile(joinSpan, 0.5))}, p95 ${ms(quantile(joinSpan, 0.95))}`,
      )
      return built
    }

    const built = await firstRun(CONCURRENCY, 0)
    // Twice the slots: the critical path is then the bound, and the graph's shape costs less.
    await firstRun(2 * CONCURRENCY, 1)

    const unchanged = await run(built.flow)
    report.push(
      `  unchanged re-run: ${unchanged.totals.dispatched} dispatched, ${unchanged.totals.cached} cached (target 0 dispatched)`,
    )

    // The edit: a model node in the middle of the plan, whose join gets a new template.
    const editedIndex = Math.floor(NODES / 2)
    const edited = new Set([editedIndex])
    const editedBuilt = buildFlow(dag, model.id, edited)
    editedBuilt.flow.id = built.flow.id
    const expected = changedByEdit(dag, edited)
    const plan = planFlow(editedBuilt.flow, catalog.catalog)
    const structural = plan.ok
      ? plan.plan.downstreamOf([uid('join', editedIndex)]).size
      : Number.NaN
    const dispatchedIds = new Set<string>()
    spans.clear()
    const afterEdit = await run(editedBuilt.flow)
    for (const id of spans.keys()) dispatchedIds.add(nameOf(id))
    const unexpected = [...dispatchedIds].filter((id) => !expected.has(id))
    const missing = [...expected].filter((id) => !dispatchedIds.has(id))
    report.push(
      `  re-run after editing join-${editedIndex}: ${afterEdit.totals.dispatched} dispatched ÷ ${expected.size} nodes whose inputs the edit changes = ${(afterEdit.totals.dispatched / expected.size).toFixed(2)} (target 1.00; ${unexpected.length} dispatched not expected, ${missing.length} expected not dispatched); structural downstream of the edit: ${structural} nodes`,
    )
  } finally {
    await media.close()
    dbs.close()
    await sandbox.close()
  }
}

describe('executor', () => {
  bench(`runFlow, ${NODES}-node random DAG, then unchanged and edited re-runs`, benchmark, {
    time: 0,
    iterations: 1,
    warmupTime: 0,
    warmupIterations: 0,
  })
})
