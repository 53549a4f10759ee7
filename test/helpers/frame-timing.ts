import type { CDPSession, Page } from 'playwright-core'

/**
 * Frame timing of a page in Chromium, for benchmarks of what a person sees while they interact:
 * - in the page, the `requestAnimationFrame` timestamps of every frame of a recording (the frame
 *   time a person sees: when rAF is paced by vsync, a frame whose work overruns shows up as a
 *   delta of two or more vsync intervals), with the long tasks and long animation frames the
 *   page's PerformanceObserver reports meanwhile;
 * - from a DevTools trace of the same window, the renderer main thread's own work: per frame
 *   (the busy time of its tasks between two rAF timestamps, which is not rounded up to vsync
 *   intervals and so tells how much of a frame's budget the work takes, and how it grows with the
 *   size of what is drawn), and by kind (script, input dispatch, style, layout, paint, GC).
 */

export interface FrameRecording {
  /** rAF timestamps (ms, the page's clock), first to last frame of the recording. */
  frames: number[]
  /** Long tasks (≥ 50 ms): [start, duration] in ms; null when the browser has no such entries. */
  longTasks: [number, number][] | null
  /** Long animation frames (≥ 50 ms): [start, duration, blocking]; null when unsupported. */
  longFrames: [number, number, number][] | null
  /** The page-clock times of the start and stop marks (`performance.mark`). */
  startMark: number
  stopMark: number
}

/**
 * Installed with `page.evaluate` as source text, so the test project needs no DOM typings.
 * `start(name)` marks the start and records every rAF timestamp until `stop(name)`.
 */
const PROBE_SOURCE = `(() => {
  if (globalThis.__atelierFrameProbe) return
  const probe = { frames: [], recording: false, startMark: 0 }
  // Entries come to an observer some time after they end: the stop takes what is pending.
  const observe = (type, entry) => {
    const seen = []
    try {
      const observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) seen.push(entry(e))
      })
      observer.observe({ type })
      return { seen, take: () => observer.takeRecords().map(entry) }
    } catch {
      return null
    }
  }
  const tasks = observe('longtask', (e) => [e.startTime, e.duration])
  const frames = observe('long-animation-frame', (e) => [
    e.startTime,
    e.duration,
    e.blockingDuration ?? 0,
  ])
  const within = (observed, from) =>
    observed === null
      ? null
      : [...observed.seen, ...observed.take()].filter((entry) => entry[0] >= from)
  const loop = (now) => {
    if (!probe.recording) return
    probe.frames.push(now)
    requestAnimationFrame(loop)
  }
  probe.start = (name) => {
    probe.frames = []
    for (const observed of [tasks, frames]) observed?.seen.splice(0)
    probe.recording = true
    probe.startMark = performance.mark(name).startTime
    requestAnimationFrame(loop)
  }
  probe.stop = (name) => {
    probe.recording = false
    const stopMark = performance.mark(name).startTime
    return {
      frames: probe.frames,
      longTasks: within(tasks, probe.startMark),
      longFrames: within(frames, probe.startMark),
      startMark: probe.startMark,
      stopMark,
    }
  }
  globalThis.__atelierFrameProbe = probe
})()`

export async function installFrameProbe(page: Page): Promise<void> {
  await page.evaluate(PROBE_SOURCE)
}

export async function startFrames(page: Page, mark: string): Promise<void> {
  await page.evaluate(`globalThis.__atelierFrameProbe.start(${JSON.stringify(mark)})`)
}

export async function stopFrames(page: Page, mark: string): Promise<FrameRecording> {
  return page.evaluate<FrameRecording>(
    `globalThis.__atelierFrameProbe.stop(${JSON.stringify(mark)})`,
  )
}

/** rAF timestamps of an idle page for `ms`: whether (and how) headless Chromium paces frames. */
export async function idleFrameIntervals(page: Page, ms: number): Promise<number[]> {
  const stamps = await page.evaluate<number[]>(`new Promise((resolve) => {
    const stamps = []
    const loop = (now) => {
      stamps.push(now)
      if (now - stamps[0] < ${String(ms)}) requestAnimationFrame(loop)
      else resolve(stamps)
    }
    requestAnimationFrame(loop)
  })`)
  return intervals(stamps)
}

export const intervals = (stamps: readonly number[]): number[] =>
  stamps.slice(1).map((stamp, i) => stamp - (stamps[i] ?? stamp))

// ---- DevTools trace

export interface TraceEvent {
  name: string
  cat: string
  ph: string
  ts: number
  dur?: number
  /** Thread (CPU) duration, µs. */
  tdur?: number
  pid: number
  tid: number
  args?: Record<string, unknown>
}

/** The categories the Performance panel records: tasks, script, style, layout, paint, GC, marks. */
const TRACE_CATEGORIES = [
  '-*',
  'toplevel',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'blink.user_timing',
  'v8',
]

export interface Tracing {
  stop: () => Promise<TraceEvent[]>
}

export async function startTracing(cdp: CDPSession): Promise<Tracing> {
  const events: TraceEvent[] = []
  const collect = ({ value }: { value: object[] }) => {
    events.push(...(value as TraceEvent[]))
  }
  cdp.on('Tracing.dataCollected', collect)
  await cdp.send('Tracing.start', {
    traceConfig: { includedCategories: TRACE_CATEGORIES, recordMode: 'recordAsMuchAsPossible' },
    transferMode: 'ReportEvents',
  })
  return {
    stop: async () => {
      const complete = new Promise<void>((resolve) => {
        cdp.once('Tracing.tracingComplete', () => {
          resolve()
        })
      })
      await cdp.send('Tracing.end')
      await complete
      cdp.off('Tracing.dataCollected', collect)
      return events
    },
  }
}

/** Top-level tasks of a thread, by the names Chromium has used for them. */
const TASK_NAMES = new Set(['ThreadControllerImpl::RunTask', 'RunTask'])

/**
 * Main-thread events counted by kind, self time only (a FunctionCall inside an EventDispatch
 * counts once, under the innermost kind). Names as the Performance panel's trace has them.
 */
const KINDS: Readonly<Record<string, string>> = {
  EventDispatch: 'input dispatch and hit testing',
  HitTest: 'input dispatch and hit testing',
  FunctionCall: 'script (event listeners, React scheduler tasks, timers)',
  'v8.callFunction': 'script (event listeners, React scheduler tasks, timers)',
  TimerFire: 'script (event listeners, React scheduler tasks, timers)',
  FireAnimationFrame: 'script: rAF callbacks (the probe)',
  'v8.compile': 'script: compile',
  EvaluateScript: 'script (event listeners, React scheduler tasks, timers)',
  'V8.Execute': 'script (event listeners, React scheduler tasks, timers)',
  UpdateLayoutTree: 'style recalc',
  ScheduleStyleRecalculation: 'style recalc',
  Layout: 'layout',
  PrePaint: 'paint (pre-paint, paint, layerize, commit)',
  Paint: 'paint (pre-paint, paint, layerize, commit)',
  Layerize: 'paint (pre-paint, paint, layerize, commit)',
  Commit: 'paint (pre-paint, paint, layerize, commit)',
  UpdateLayer: 'paint (pre-paint, paint, layerize, commit)',
  MinorGC: 'garbage collection',
  MajorGC: 'garbage collection',
  'V8.GCScavenger': 'garbage collection',
  'V8.GCCompactor': 'garbage collection',
}

export interface MainThreadWork {
  /** Busy time (wall) of the main thread's tasks within each frame interval (ms). */
  perFrame: number[]
  /**
   * The same tasks' thread CPU time per frame interval (ms): on a machine whose cores are shared
   * the wall time also counts the time the thread waited for a core, the CPU time does not.
   */
  cpuPerFrame: number[]
  /** All task time in the window (ms): wall and CPU. */
  total: number
  totalCpu: number
  /** CPU self time by kind within the window (ms); "other" is task time no kind covers. */
  byKind: Map<string, number>
  /** mousemove events the page dispatched in the window. */
  moveEvents: number
}

/**
 * The page's main-thread work in the trace, split by the recording's frames. The page's clock
 * is placed on the trace's through the recording's start mark, which both hold.
 */
export function mainThreadWork(
  events: readonly TraceEvent[],
  recording: FrameRecording,
  startMarkName: string,
): MainThreadWork {
  const mark = events.find((event) => event.name === startMarkName && event.cat.includes('user'))
  if (!mark) throw new Error(`The trace has no mark ${startMarkName}; was it recording?`)
  const onMain = (event: TraceEvent) => event.pid === mark.pid && event.tid === mark.tid
  // Trace time (µs) = page time (ms) × 1000 + offset.
  const offset = mark.ts - recording.startMark * 1000
  const toPage = (ts: number) => (ts - offset) / 1000
  const from = recording.frames[0] ?? recording.startMark
  const to = recording.frames.at(-1) ?? recording.stopMark
  const spans = events
    .filter((event) => onMain(event) && event.ph === 'X' && event.dur !== undefined)
    .map((event) => ({
      event,
      start: toPage(event.ts),
      end: toPage(event.ts + (event.dur ?? 0)),
    }))
    .filter((span) => span.end > from && span.start < to)
    .sort((a, b) => a.start - b.start || b.end - a.end)
  // Chromium nests a `RunTask` inside `ThreadControllerImpl::RunTask`: the outermost counts.
  const tasks: typeof spans = []
  for (const span of spans) {
    if (!TASK_NAMES.has(span.event.name)) continue
    const last = tasks.at(-1)
    if (!last || span.start >= last.end) tasks.push(span)
  }

  const overlap = (span: { start: number; end: number }, a: number, b: number) =>
    Math.max(0, Math.min(span.end, b) - Math.max(span.start, a))
  // A task's CPU time, spread over its wall time evenly: the part of it within [a, b).
  const cpuWithin = (span: (typeof spans)[number], a: number, b: number) => {
    const wall = span.end - span.start
    const cpu = (span.event.tdur ?? span.event.dur ?? 0) / 1000
    return wall > 0 ? (cpu * overlap(span, a, b)) / wall : 0
  }
  const perFrame: number[] = []
  const cpuPerFrame: number[] = []
  let first = 0
  for (let k = 0; k + 1 < recording.frames.length; k++) {
    const a = recording.frames[k] ?? 0
    const b = recording.frames[k + 1] ?? 0
    while (first < tasks.length && (tasks[first]?.end ?? 0) <= a) first++
    let busy = 0
    let cpu = 0
    for (let i = first; i < tasks.length; i++) {
      const task = tasks[i]
      if (!task || task.start >= b) break
      busy += overlap(task, a, b)
      cpu += cpuWithin(task, a, b)
    }
    perFrame.push(busy)
    cpuPerFrame.push(cpu)
  }
  const total = tasks.reduce((sum, task) => sum + overlap(task, from, to), 0)
  const totalCpu = tasks.reduce((sum, task) => sum + cpuWithin(task, from, to), 0)

  // CPU self time by kind: each kind's span less the kinds nested in it.
  const byKind = new Map<string, number>()
  const add = (kind: string, ms: number) => byKind.set(kind, (byKind.get(kind) ?? 0) + ms)
  const stack: { end: number; kind: string; self: number }[] = []
  const close = (until: number) => {
    while (stack.length > 0 && (stack.at(-1)?.end ?? 0) <= until) {
      const done = stack.pop()
      if (done) add(done.kind, done.self)
    }
  }
  let covered = 0
  for (const span of spans) {
    const kind = KINDS[span.event.name]
    if (kind === undefined) continue
    close(span.start)
    const length = cpuWithin(span, from, to)
    const parent = stack.at(-1)
    if (parent) parent.self -= length
    else covered += length
    stack.push({ end: span.end, kind, self: length })
  }
  close(Number.POSITIVE_INFINITY)
  add('other (tasks no kind above covers)', Math.max(0, totalCpu - covered))

  const moveEvents = spans.filter((span) => {
    if (span.event.name !== 'EventDispatch') return false
    const data = span.event.args?.data as { type?: string } | undefined
    return data?.type === 'mousemove'
  }).length
  return { perFrame, cpuPerFrame, total, totalCpu, byKind, moveEvents }
}
