import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, bench, describe } from 'vitest'
import { startLocalSandbox, type Backend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { createHandlers, dispatchIpc, type IpcHandlers } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type { PaletteItem, PalettePort, StoredFlow } from '../../src-shared/domain/flow-editor'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import {
  idleFrameIntervals,
  installFrameProbe,
  intervals,
  mainThreadWork,
  startFrames,
  startTracing,
  stopFrames,
  type FrameRecording,
  type MainThreadWork,
} from '../helpers/frame-timing'
import { bridgeToMainProcess } from '../helpers/page-bridge'
import { serveBuiltRenderer, type ServedRenderer } from '../helpers/renderer-build'

/**
 * Dragging a node in the flow editor, on a canvas of 1,000 nodes and 1,500 edges against the
 * same drag on 50 nodes and 75 edges. The target: p95 frame time ≤ 16.7 ms on the large canvas,
 * and ≤ 1.5 × the small canvas's p95.
 *
 * The app runs as in the e2e tests: the shipped renderer bundle in headless Chromium, the real
 * core (its databases, its first sync) behind the IPC bridge, on the local sandbox. Each flow is
 * a random DAG of text, prompt-template and model nodes (every edge a valid connection, so the
 * editor draws all of them), made with the palette's own ports and imported through
 * `flows.import`; it is opened from the flow list as a person would, shown whole (the canvas's
 * fit view), and one node near the middle is dragged around a circle: DRAG_MOVES mouse moves
 * paced over DRAG_MS, after a shorter warm-up drag of another node whose save and check are
 * waited for.
 *
 * What is measured, and why: headless Chromium here paces rAF by a 60 Hz vsync like a window
 * does (the idle rAF interval is measured and printed first; if it ever is not ~16.7 ms, the
 * frame times below are not frame times a person would see, and the main-thread figures are the
 * ones to read). So:
 * - frame time = rAF interval during the drag: what the issue's target is about. A frame whose
 *   work overruns the vsync shows up as 33.3 ms (or more), so this figure is coarse;
 * - main-thread work per frame = the renderer main thread's task time within each rAF interval,
 *   from a DevTools trace of the same drag: not rounded to vsync intervals, so it says how much
 *   of the 16.7 ms budget a frame's work takes and how it grows from 50 to 1,000 nodes, and its
 *   split by kind (script: listeners and React's render; style, layout, paint, GC) says where
 *   the time goes. Wall time and the thread's CPU time both: the machine's 2 cores are shared
 *   with other work, and a task's wall time then also counts the time it waited for a core, so
 *   the CPU time is the figure that compares across runs. Per move too: when a move costs more
 *   than a frame, the frames between moves are idle and the per-frame spread hides it. Tracing
 *   costs a little itself, so the frame times are from a second drag of the same node with no
 *   trace running;
 * - long tasks and long animation frames (≥ 50 ms) from the page's PerformanceObserver.
 *
 * Chromium acknowledges each mouse move once the page has handled it, so a page slower than the
 * pacing stretches the drag (the printed "moves sent over"), and the editor's debounced check
 * and autosave may then fire within it, as they would for a person.
 *
 * The figures vary with the machine's load (printed): the bench measures, it asserts nothing.
 * ATELIER_BENCH_DRAG_NODES (default 1000) sets the large size while developing;
 * ATELIER_BENCH_TRACE_DIR keeps the traces, ATELIER_BENCH_VERBOSE=1 tells the steps.
 */

const LARGE = Number(process.env.ATELIER_BENCH_DRAG_NODES ?? 1000)
const SIZES = [
  { nodes: 50, edges: 75 },
  { nodes: LARGE, edges: LARGE * 1.5 },
] as const
/** ATELIER_BENCH_VERBOSE=1 says on stderr what the bench is doing, while developing. */
const VERBOSE = process.env.ATELIER_BENCH_VERBOSE === '1'
const startedAt = performance.now()
/** ATELIER_BENCH_TRACE_DIR=<dir> keeps each traced drag there, for the Performance panel. */
const TRACE_DIR = process.env.ATELIER_BENCH_TRACE_DIR
const step = (what: string) => {
  if (VERBOSE) console.error(`[${((performance.now() - startedAt) / 1000).toFixed(1)} s] ${what}`)
}
const SEED = 20_260_217
const VIEWPORT = { width: 1920, height: 1080 }
/** 120 moves over 2 s: a person's drag at 60 moves a second. */
const DRAG_MOVES = 120
const DRAG_MS = 2000
const DRAG_RADIUS_PX = 120
const WARMUP_MOVES = 30
/** An edge comes from one of the previous nodes in this window, as a drawn graph's edges do. */
const EDGE_WINDOW = 120
const VSYNC_MS = 1000 / 60
const TARGET_MS = 16.7
/**
 * rAF timestamps come at vsync intervals give or take a fraction of a millisecond, so a drag
 * whose every frame is on time still has a p95 interval of 16.7–16.9 ms: within this of the
 * target is one frame, not a missed one (a missed frame is 33.3 ms).
 */
const RAF_JITTER_MS = 0.5
const TARGET_RATIO = 1.5
/** Layout: a grid, filled column by column in topological order, so edges run left to right. */
const GRID = { dx: 250, dy: 170 }
const WAIT_MS = 120_000

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

type Kind = 'text' | 'template' | 'model'
/** Two fifths templates, two fifths models, one fifth text, interleaved. */
const PATTERN: readonly Kind[] = ['text', 'template', 'model', 'template', 'model']

interface NodePlan {
  kind: Kind
  /** Upstream node indexes, one per wired input. */
  sources: number[]
}

/**
 * Which node feeds which: each model's prompt comes from an earlier text or template node, and
 * the templates share the rest of the edge budget (2 or 3 inputs each at both sizes), each from
 * an earlier node of any kind (a model's image goes into an image input: a dependency, as in
 * the executor bench). Only earlier nodes: a DAG.
 */
function planGraph(size: number, edges: number, seed: number): NodePlan[] {
  const random = prng(seed)
  const kinds = Array.from({ length: size }, (_, i) => PATTERN[i % PATTERN.length] ?? 'text')
  const templates = kinds.flatMap((kind, i) => (kind === 'template' ? [i] : []))
  const models = kinds.filter((kind) => kind === 'model').length
  const budget = edges - models
  const base = Math.floor(budget / templates.length)
  const shuffled = [...templates]
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[shuffled[i], shuffled[j]] = [shuffled[j] ?? 0, shuffled[i] ?? 0]
  }
  const extra = new Set(shuffled.slice(0, budget - base * templates.length))
  const earlier = (i: number, fits: (kind: Kind) => boolean): number[] => {
    const found: number[] = []
    for (let j = Math.max(0, i - EDGE_WINDOW); j < i; j++)
      if (fits(kinds[j] ?? 'text')) found.push(j)
    return found
  }
  const pick = (from: readonly number[]) => from[Math.floor(random() * from.length)] ?? 0
  return kinds.map((kind, i): NodePlan => {
    if (kind === 'text') return { kind, sources: [] }
    if (kind === 'model') return { kind, sources: [pick(earlier(i, (k) => k !== 'model'))] }
    const want = base + (extra.has(i) ? 1 : 0)
    const candidates = earlier(i, () => true)
    const sources = new Set<number>()
    // Distinct upstream nodes where there are enough of them; the first templates repeat.
    while (sources.size < Math.min(want, candidates.length)) sources.add(pick(candidates))
    const list = [...sources]
    while (list.length < want) list.push(pick(candidates))
    return { kind, sources: list }
  })
}

interface PaletteKinds {
  text: PaletteItem
  template: PaletteItem
  model: PaletteItem
}

function paletteKinds(palette: readonly PaletteItem[]): PaletteKinds {
  const builtin = (code: string) => {
    const item = palette.find(
      (candidate) => candidate.kind === 'builtin' && candidate.target === code,
    )
    if (!item) throw new Error(`The palette has no built-in ${code}.`)
    return item
  }
  const model = palette.find(
    (item) =>
      item.kind === 'model' &&
      item.inputs.some((port) => port.name === 'prompt' && port.variableType === 'text') &&
      item.outputs.some((port) => port.variableType === 'image'),
  )
  if (!model) throw new Error('The palette has no model with a text prompt and an image out.')
  return { text: builtin('text'), template: builtin('prompt_template'), model }
}

/** The flow file (JSON text) of a planned graph, with ports as the palette puts them down. */
function flowFile(name: string, plan: readonly NodePlan[], palette: PaletteKinds): string {
  const rows = Math.ceil(Math.sqrt(plan.length))
  const outputIds = plan.map(() => randomUUID())
  const input = (port: Pick<PalettePort, 'name' | 'variableType'> & Partial<PalettePort>) => ({
    id: randomUUID(),
    name: port.name,
    display_name: port.displayName ?? null,
    variable_type_code: port.variableType,
    validator_code: port.validatorCode ?? null,
    validator_attrs: port.validatorAttrs ?? null,
    is_required: port.required ?? false,
    default_value: port.defaultValue ?? null,
    value: null as unknown,
    source_output_id: null as string | null,
  })
  const nodes = plan.map((node, i) => {
    const item = palette[node.kind]
    const inputs = item.inputs.map(input)
    if (node.kind === 'text') {
      const value = inputs.find((port) => port.name === 'value')
      if (value) value.value = `word ${i}`
    } else if (node.kind === 'model') {
      const prompt = inputs.find((port) => port.name === 'prompt')
      if (prompt) prompt.source_output_id = outputIds[node.sources[0] ?? 0] ?? null
    } else {
      const placeholders: string[] = []
      node.sources.forEach((source, k) => {
        const image = plan[source]?.kind === 'model'
        const port = input({
          name: `${image ? 'd' : 'v'}${k}`,
          variableType: image ? 'image' : 'text',
        })
        port.source_output_id = outputIds[source] ?? null
        if (!image) placeholders.push(`{${port.name}}`)
        inputs.push(port)
      })
      const template = inputs.find((port) => port.name === 'template')
      if (template) template.value = `${placeholders.join(' ')} #${i}`.trim()
    }
    const [output] = item.outputs
    if (!output) throw new Error(`${item.name} has no output.`)
    return {
      id: randomUUID(),
      label: `${node.kind} ${i}`,
      type_code: item.kind,
      ...(item.kind === 'model' ? { model_id: item.target } : { builtin_node_code: item.target }),
      x: Math.floor(i / rows) * GRID.dx,
      y: (i % rows) * GRID.dy,
      config: {},
      inputs,
      outputs: [
        {
          id: outputIds[i],
          name: output.name,
          display_name: output.displayName,
          variable_type_code: output.variableType,
        },
      ],
    }
  })
  return JSON.stringify({ id: randomUUID(), name, nodes })
}

// ---- The page

/**
 * Counts the IPC calls the page makes, by channel, and those still unanswered, by wrapping the
 * bridge's `window.atelier` methods: the only way to tell from outside when the editor's
 * debounced check and autosave after a drag have been answered.
 */
const IPC_COUNTER = `(() => {
  const api = globalThis.atelier
  const counts = { calls: {}, inFlight: 0 }
  for (const [domain, verbs] of Object.entries(api)) {
    if (typeof verbs !== 'object') continue
    for (const [verb, call] of Object.entries(verbs)) {
      const channel = domain + '.' + verb
      verbs[verb] = (args) => {
        counts.calls[channel] = (counts.calls[channel] ?? 0) + 1
        counts.inFlight++
        return Promise.resolve(call(args)).finally(() => { counts.inFlight-- })
      }
    }
  }
  globalThis.__atelierIpc = counts
})()`

interface IpcCounts {
  calls: Record<string, number>
  inFlight: number
}

const ipcCounts = (page: Page) => page.evaluate<IpcCounts>('globalThis.__atelierIpc')

/**
 * Waits until `condition` (page source, an expression) holds, checking every 50 ms for at most
 * WAIT_MS. Page source evaluated over CDP: the app's CSP forbids the eval that
 * `page.waitForFunction` needs.
 */
async function waitInPage(page: Page, condition: string, what: string): Promise<void> {
  const held = await page.evaluate(`new Promise((resolve) => {
    const end = performance.now() + ${String(WAIT_MS)}
    const tick = () => {
      if (${condition}) resolve(true)
      else if (performance.now() > end) resolve(false)
      else setTimeout(tick, 50)
    }
    tick()
  })`)
  if (held !== true) throw new Error(`Waited ${String(WAIT_MS)} ms for ${what}, in vain.`)
}

/**
 * Waits until the editor has asked for a check and a save since `before` (when `edited`) or a
 * check at all, every IPC call is answered, and two frames have drawn the answers.
 */
async function settle(page: Page, before: IpcCounts, edited: boolean): Promise<void> {
  const checks = before.calls['flows.check'] ?? 0
  const saves = before.calls['flows.save'] ?? 0
  await waitInPage(
    page,
    `(globalThis.__atelierIpc.calls['flows.check'] ?? 0) > ${String(checks)} &&
      (${String(!edited)} || (globalThis.__atelierIpc.calls['flows.save'] ?? 0) > ${String(saves)}) &&
      globalThis.__atelierIpc.inFlight === 0`,
    'the check and the save to be answered',
  )
  await page.evaluate(
    'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
  )
}

interface CanvasState {
  /** Zoomed out past reading: nodes drawn as labelled boxes (Canvas.tsx, FAR_ZOOM). */
  far: boolean
  nodes: number
  shownNodes: number
  edges: number
  inView: number
  zoom: number
  canvas: { x: number; y: number; width: number; height: number }
}

const CANVAS_STATE = `(() => {
  const canvas = document.querySelector('[data-testid="flow-canvas"]')
  const box = canvas.getBoundingClientRect()
  const nodes = [...document.querySelectorAll('.react-flow__node')]
  const shown = nodes.filter((node) => getComputedStyle(node).visibility !== 'hidden')
  const inView = shown.filter((node) => {
    const r = node.getBoundingClientRect()
    return r.right > box.left && r.left < box.right && r.bottom > box.top && r.top < box.bottom
  })
  const viewport = document.querySelector('.react-flow__viewport')
  const zoom = viewport ? new DOMMatrix(getComputedStyle(viewport).transform).a : 0
  return {
    far: canvas.classList.contains('far'),
    nodes: nodes.length,
    shownNodes: shown.length,
    edges: document.querySelectorAll('.react-flow__edge').length,
    inView: inView.length,
    zoom,
    canvas: { x: box.x, y: box.y, width: box.width, height: box.height },
  }
})()`

/**
 * The screen centre of the node nearest to `at`, other than `except`, once the canvas has drawn
 * it: read in the page at each frame until a node is there and its box held still for two
 * frames (a fit view or a drop still moving the nodes is waited out), for at most WAIT_MS.
 */
async function nodeNear(
  page: Page,
  at: { x: number; y: number },
  except: string | null,
): Promise<{ id: string; x: number; y: number }> {
  const found = await page.evaluate<{
    id: string
    x: number
    y: number
  } | null>(`new Promise((resolve) => {
    const end = performance.now() + ${String(WAIT_MS)}
    let last = null
    const nearest = () => {
      let best = null
      for (const node of document.querySelectorAll('.react-flow__node')) {
        if (node.dataset.id === ${JSON.stringify(except)}) continue
        const r = node.getBoundingClientRect()
        if (r.width === 0 || r.height === 0) continue
        const x = r.left + r.width / 2
        const y = r.top + r.height / 2
        const d = Math.hypot(x - ${String(at.x)}, y - ${String(at.y)})
        if (!best || d < best.d) best = { id: node.dataset.id, x, y, d }
      }
      return best
    }
    const tick = () => {
      const best = nearest()
      if (best && last && best.id === last.id && best.x === last.x && best.y === last.y) {
        resolve({ id: best.id, x: best.x, y: best.y })
      } else if (performance.now() > end) resolve(null)
      else {
        last = best
        requestAnimationFrame(tick)
      }
    }
    requestAnimationFrame(tick)
  })`)
  if (!found)
    throw new Error(
      `Waited ${String(WAIT_MS)} ms for a node near ${String(at.x)}, ${String(at.y)} to be drawn, in vain.`,
    )
  return found
}

/**
 * Drags from `from` around a circle of DRAG_RADIUS_PX back to where it started: `moves` mouse
 * moves, the i-th sent at i × `ms` / `moves` from the first. The pacing is a person's hand, not
 * a wait for the page: a move the page is slow to take is simply sent late.
 */
async function drag(
  page: Page,
  from: { x: number; y: number },
  moves: number,
  ms: number,
): Promise<{ sent: number; tookMs: number }> {
  await page.mouse.move(from.x, from.y)
  await page.mouse.down()
  const began = performance.now()
  for (let i = 1; i <= moves; i++) {
    const due = began + (i * ms) / moves
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const angle = (2 * Math.PI * i) / moves
    await page.mouse.move(
      from.x + DRAG_RADIUS_PX * Math.sin(angle),
      from.y + DRAG_RADIUS_PX * (1 - Math.cos(angle)),
    )
  }
  const tookMs = performance.now() - began
  await page.mouse.up()
  return { sent: moves, tookMs }
}

// ---- Figures

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}
const ms = (value: number) => `${value.toFixed(1)} ms`
const spread = (values: readonly number[]) =>
  `p50 ${ms(quantile(values, 0.5))}, p95 ${ms(quantile(values, 0.95))}, max ${ms(Math.max(...values))}`

interface SizeResult {
  nodes: number
  edges: number
  frameTimes: number[]
  work: MainThreadWork
  workFrames: number
  recording: FrameRecording
  moves: { sent: number; tookMs: number }
  openMs: number
  state: CanvasState
}

const report: string[] = []

afterAll(() => {
  console.log(`\nFlow editor drag\n${report.join('\n')}\n`)
})

async function measureSize(
  browser: Browser,
  rendererUrl: string,
  backend: Backend,
  core: Core,
  stored: StoredFlow,
  size: { nodes: number; edges: number },
): Promise<SizeResult> {
  const page = await browser.newPage({ viewport: VIEWPORT })
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  try {
    await bridgeToMainProcess(page, () => backend.info, { core })
    await page.goto(rendererUrl)
    await page.evaluate(IPC_COUNTER)
    await installFrameProbe(page)

    step(`${String(size.nodes)} nodes: opening`)
    // Opened from the list, as a person would.
    const opened = performance.now()
    const beforeOpen = await ipcCounts(page)
    await page
      .getByTestId(`flow-row-${stored.name}`)
      .getByRole('button', { name: stored.name, exact: true })
      .click({ timeout: WAIT_MS })
    await waitInPage(
      page,
      `[...document.querySelectorAll('.react-flow__node')].filter(
        (node) => getComputedStyle(node).visibility !== 'hidden',
      ).length === ${String(size.nodes)} &&
        document.querySelectorAll('.react-flow__edge').length === ${String(size.edges)}`,
      `${String(size.nodes)} nodes and ${String(size.edges)} edges on the canvas`,
    )
    const openMs = performance.now() - opened
    step(`shown in ${ms(openMs)}`)
    await settle(page, beforeOpen, false)

    step('checked')
    // The whole flow in view, as the canvas's fit-view button shows it.
    await page.getByRole('button', { name: 'fit view' }).click()
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
    )
    const state = await page.evaluate<CanvasState>(CANVAS_STATE)
    const centre = {
      x: state.canvas.x + state.canvas.width / 2,
      y: state.canvas.y + state.canvas.height / 3,
    }
    const target = await nodeNear(page, centre, null)

    // A warm-up drag of a neighbour: the code paths of a drag compiled, the inspector shown.
    const beforeWarmup = await ipcCounts(page)
    const neighbour = await nodeNear(page, { x: target.x, y: target.y + 60 }, target.id)
    await drag(page, neighbour, WARMUP_MOVES, (WARMUP_MOVES * DRAG_MS) / DRAG_MOVES)
    await settle(page, beforeWarmup, true)
    step('warmed up')

    // The traced drag: main-thread work per frame and by kind.
    const cdp = await page.context().newCDPSession(page)
    const beforeTraced = await ipcCounts(page)
    const tracing = await startTracing(cdp)
    await startFrames(page, 'atelier-drag-traced')
    await drag(page, target, DRAG_MOVES, DRAG_MS)
    const traced = await stopFrames(page, 'atelier-drag-traced-end')
    const events = await tracing.stop()
    await cdp.detach()
    step(`traced: ${String(events.length)} events`)
    if (TRACE_DIR) {
      writeFileSync(
        join(TRACE_DIR, `editor-drag-${String(size.nodes)}.json`),
        JSON.stringify({ traceEvents: events }),
      )
    }
    const work = mainThreadWork(events, traced, 'atelier-drag-traced')
    await settle(page, beforeTraced, true)

    // The same drag untraced: the frame times.
    const back = await nodeNear(page, { x: target.x, y: target.y }, null)
    await startFrames(page, 'atelier-drag')
    const moves = await drag(page, back, DRAG_MOVES, DRAG_MS)
    const recording = await stopFrames(page, 'atelier-drag-end')
    step('measured')
    if (errors.length > 0) throw new Error(`The page failed: ${errors.join('; ')}`)
    return {
      ...size,
      frameTimes: intervals(recording.frames),
      work,
      workFrames: traced.frames.length - 1,
      recording,
      moves,
      openMs,
      state,
    }
  } finally {
    await page.close()
  }
}

function describeSize(result: SizeResult): string[] {
  const { work, recording, state } = result
  const longTasks = recording.longTasks
  const longFrames = recording.longFrames
  const kinds = [...work.byKind.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, total]) => `${kind} ${(total / Math.max(1, work.moveEvents)).toFixed(2)}`)
  return [
    `  ${result.nodes} nodes, ${result.edges} edges: ${state.shownNodes} nodes and ${state.edges} edges drawn (React Flow renders every node and edge, in view or not: onlyRenderVisibleElements is off), ${state.inView} nodes in view at zoom ${state.zoom.toFixed(3)} after fit view (${state.far ? 'zoomed out past reading: nodes drawn as labelled boxes' : 'nodes drawn in full'}); opened from the list in ${ms(result.openMs)}`,
    `    frame time (rAF interval): ${spread(result.frameTimes)}; ${result.frameTimes.length} frames for ${result.moves.sent} moves sent over ${ms(result.moves.tookMs)}; ${result.frameTimes.filter((t) => t > 1.5 * VSYNC_MS).length} frames over 1.5 vsync`,
    `    main-thread work per frame (trace), wall: ${spread(work.perFrame)}; CPU: ${spread(work.cpuPerFrame)}; over ${result.workFrames} frames, ${work.moveEvents} mousemove events handled; per move ${ms(work.total / Math.max(1, work.moveEvents))} wall, ${ms(work.totalCpu / Math.max(1, work.moveEvents))} CPU`,
    `    CPU per move by kind (ms, self time): ${kinds.join('; ')}`,
    `    long tasks ≥ 50 ms: ${longTasks === null ? 'not supported' : `${longTasks.length}, max ${ms(Math.max(0, ...longTasks.map((t) => t[1])))}`}; long animation frames ≥ 50 ms: ${longFrames === null ? 'not supported' : `${longFrames.length}, max ${ms(Math.max(0, ...longFrames.map((f) => f[1])))}`}`,
  ]
}

async function benchmark(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'atelier-editor-drag-'))
  let renderer: ServedRenderer | null = null
  let browser: Browser | null = null
  let backend: Backend | null = null
  let logger: Logger | null = null
  let core: Core | null = null
  try {
    renderer = await serveBuiltRenderer()
    ;[browser, backend] = await Promise.all([
      launchChromium(),
      startLocalSandbox(join(home, 'sandbox')),
    ])
    logger = openLogger({ home })
    core = openCore({ home, backend, logger })
    const opened = core
    const handlers: IpcHandlers = createHandlers({
      platform: process.platform,
      backend: () => backend?.info ?? null,
      openExternal: () => Promise.resolve(),
      core: () => opened,
    })
    const ipc = async <T>(channel: string, args?: unknown): Promise<T> => {
      const result = await dispatchIpc(handlers, channel, args, { shell: 'web' })
      if (!result.ok) throw new Error(`${channel}: ${result.error.code} ${result.error.message}`)
      return result.value as T
    }
    // The palette's models come from the first sync.
    await core.syncNow()
    step('synced')
    const palette = paletteKinds(await ipc<PaletteItem[]>('flows.palette'))

    const idle = await (async () => {
      const page = await browser.newPage({ viewport: VIEWPORT })
      try {
        await page.goto(renderer.url)
        return await idleFrameIntervals(page, 1000)
      } finally {
        await page.close()
      }
    })()
    report.push(
      `  headless Chromium ${browser.version()}, ${VIEWPORT.width}×${VIEWPORT.height}: idle rAF interval p50 ${ms(quantile(idle, 0.5))}, p95 ${ms(quantile(idle, 0.95))} (${Math.abs(quantile(idle, 0.5) - VSYNC_MS) < 1 ? 'paced at 60 Hz, so rAF intervals are frame times' : 'NOT paced at 60 Hz: read the main-thread work per frame, not the frame times'})`,
    )

    const results: SizeResult[] = []
    for (const size of SIZES) {
      const name = `Drag bench ${size.nodes}`
      const json = flowFile(name, planGraph(size.nodes, size.edges, SEED + size.nodes), palette)
      const stored = await ipc<StoredFlow>('flows.import', { json })
      const result = await measureSize(browser, renderer.url, backend, core, stored, size)
      results.push(result)
      report.push(...describeSize(result))
    }
    const [small, large] = results
    if (small && large) {
      const p95 = (values: number[]) => quantile(values, 0.95)
      const ratio = p95(large.frameTimes) / p95(small.frameTimes)
      const cpuRatio = p95(large.work.cpuPerFrame) / p95(small.work.cpuPerFrame)
      report.push(
        `  p95 frame time ${large.nodes} ÷ ${small.nodes} nodes = ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}); p95 frame time at ${large.nodes} nodes ${p95(large.frameTimes).toFixed(2)} ms (target ≤ ${TARGET_MS} ms, give or take the rAF jitter of ${RAF_JITTER_MS} ms: ${p95(large.frameTimes) <= TARGET_MS + RAF_JITTER_MS ? 'met' : 'MISSED'})`,
        `  p95 main-thread CPU per frame ${large.nodes} ÷ ${small.nodes} nodes = ${cpuRatio.toFixed(2)}; at ${large.nodes} nodes ${ms(p95(large.work.cpuPerFrame))} of the ${ms(VSYNC_MS)} budget (${ms(p95(small.work.cpuPerFrame))} at ${small.nodes})`,
      )
    }
    report.push(
      `  load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' / ')} (1, 5, 15 min) on 2 cores`,
    )
  } finally {
    await core?.close()
    logger?.close()
    await browser?.close()
    await renderer?.close()
    await backend?.close()
    rmSync(home, { recursive: true, force: true })
  }
}

const { available } = chromiumAvailability()

describe.runIf(available)('flow editor', () => {
  bench('dragging a node: 50 nodes against 1,000 nodes and 1,500 edges', benchmark, {
    time: 0,
    iterations: 1,
    warmupTime: 0,
    warmupIterations: 0,
  })
})
