import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, bench, describe } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { openDatabases } from '../../src-main/db'
import { openLogger, type Logger } from '../../src-main/log'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import {
  idleFrameIntervals,
  installFrameProbe,
  intervals,
  startFrames,
  stopFrames,
} from '../helpers/frame-timing'
import { runPages } from '../helpers/mirror-runs'
import { bridgeToMainProcess } from '../helpers/page-bridge'
import { serveBuiltRenderer, type ServedRenderer } from '../helpers/renderer-build'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The Runs view with 100,000 runs in the mirror against the same with 1,000. Targets (issue 8):
 * the first rows ≤ 1 s after the app opens, and p95 frame time ≤ 16.7 ms while scrolling.
 *
 * The app runs as in the e2e tests: the shipped renderer bundle in headless Chromium, the real
 * core (its mirror, its first sync) behind the IPC bridge, a real sandbox as the service. The
 * runs are written straight into the mirror of a fresh home with its repositories before the
 * core opens (a sync of 100,000 runs would measure the sync, not the view).
 *
 * What is measured:
 * - first rows: from the page's navigation start to the first frame in which list rows exist,
 *   with Ctrl+3 pressed as soon as the shell's navigation is there (the app opens on Flows):
 *   the bundle's load, the shell's start, the IPC round trip of the first page and its paint.
 *   Also from the key press alone ("Runs opened → rows");
 * - scrolling: the list's scroll area moved by SCROLL_STEP_PX every 1/60 s for SCROLL_MS, as a
 *   wheel does, loading pages by cursor as it goes; frame time = rAF interval meanwhile (headless
 *   Chromium paces rAF at 60 Hz like a window; the idle interval is printed to show it).
 *
 * The figures vary with the machine's load (printed): the bench measures, it asserts nothing.
 */

const SIZES = [1_000, Number(process.env.ATELIER_BENCH_RUNS ?? 100_000)] as const
const VIEWPORT = { width: 1920, height: 1080 }
const SCROLL_MS = 3_000
const SCROLL_STEP_PX = 90
const TARGET_FIRST_MS = 1_000
const TARGET_FRAME_MS = 16.7
const WAIT_MS = 60_000

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}
const ms = (value: number) => `${value.toFixed(1)} ms`
const spread = (values: readonly number[]) =>
  `p50 ${ms(quantile(values, 0.5))}, p95 ${ms(quantile(values, 0.95))}, max ${ms(Math.max(...values))}`

interface SizeResult {
  runs: number
  writeMs: number
  /** Navigation start → first rows painted, per load. */
  firstRows: number[]
  /** Ctrl+3 → first rows painted, per load. */
  sectionToRows: number[]
  frameTimes: number[]
  rowsLoaded: number
  longTasks: number
}

const report: string[] = []

afterAll(() => {
  console.log(`\nRuns view\n${report.join('\n')}\n`)
})

/** In the page: the time (page clock) of the first frame in which a list row exists. */
const FIRST_ROWS_SOURCE = `new Promise((resolve) => {
  const check = () => {
    if (document.querySelector('[data-run-id]')) resolve(performance.now())
    else requestAnimationFrame(check)
  }
  requestAnimationFrame(check)
})`

/** In the page: scroll the list by a step every 1/60 s for a while, as a wheel would. */
const SCROLL_SOURCE = `new Promise((resolve) => {
  const scroll = document.querySelector('.runs-scroll')
  const started = performance.now()
  const timer = setInterval(() => {
    scroll.scrollTop += ${String(SCROLL_STEP_PX)}
    if (performance.now() - started >= ${String(SCROLL_MS)}) {
      clearInterval(timer)
      resolve(document.querySelectorAll('[data-run-id]').length)
    }
  }, 1000 / 60)
})`

async function openRunsOnce(
  browser: Browser,
  url: string,
  core: Core,
  sandbox: TestSandbox,
  scroll: boolean,
): Promise<{ first: number; afterKey: number; frames?: number[]; longTasks?: number }> {
  const page = await browser.newPage({ viewport: VIEWPORT })
  try {
    await bridgeToMainProcess(page, () => sandboxBackend(sandbox).info, { core })
    await page.goto(url, { waitUntil: 'commit' })
    const nav = page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button', { name: 'Runs' })
    await nav.waitFor({ timeout: WAIT_MS })
    const rows = page.evaluate<number>(FIRST_ROWS_SOURCE)
    const pressed = await page.evaluate<number>('performance.now()')
    await page.keyboard.press('Control+3')
    const first = await rows
    if (!scroll) return { first, afterKey: first - pressed }
    // Let the first page settle (its filter options, the sync's end) before the scroll.
    await page.waitForFunction(
      'document.querySelectorAll("[data-run-id]").length > 10',
      undefined,
      {
        timeout: WAIT_MS,
      },
    )
    await installFrameProbe(page)
    await startFrames(page, 'scroll-start')
    await page.evaluate<number>(SCROLL_SOURCE)
    const recording = await stopFrames(page, 'scroll-stop')
    return {
      first,
      afterKey: first - pressed,
      frames: intervals(recording.frames),
      longTasks: recording.longTasks?.length ?? 0,
    }
  } finally {
    await page.close()
  }
}

async function measureSize(
  browser: Browser,
  renderer: ServedRenderer,
  runs: number,
): Promise<SizeResult> {
  const sandbox = await startTestSandbox({ latencyMs: 0 })
  const home = mkdtempSync(join(tmpdir(), 'atelier-bench-runs-'))
  let logger: Logger | undefined
  let core: Core | undefined
  try {
    const started = performance.now()
    const databases = openDatabases(home)
    for (const page of runPages(runs, { orgId: sandbox.orgId, newestMs: Date.now() }, 2_000)) {
      databases.mirror.runs.upsertPage(page)
    }
    databases.close()
    const writeMs = performance.now() - started
    logger = openLogger({ home, level: 'warn' })
    core = openCore({
      home,
      logger,
      backend: { ...sandboxBackend(sandbox), close: () => Promise.resolve() },
    })
    await core.syncNow()
    const firstRows: number[] = []
    const sectionToRows: number[] = []
    // Three cold opens of the app for the first rows; the last one also scrolls.
    let last: Awaited<ReturnType<typeof openRunsOnce>> | undefined
    for (let i = 0; i < 3; i++) {
      last = await openRunsOnce(browser, renderer.url, core, sandbox, i === 2)
      firstRows.push(last.first)
      sectionToRows.push(last.afterKey)
    }
    return {
      runs,
      writeMs,
      firstRows,
      sectionToRows,
      frameTimes: last?.frames ?? [],
      rowsLoaded: core.runs.list({ limit: 1 }).total?.count ?? 0,
      longTasks: last?.longTasks ?? 0,
    }
  } finally {
    await core?.close()
    logger?.close()
    await sandbox.close()
    rmSync(home, { recursive: true, force: true })
  }
}

async function benchmark() {
  const [renderer, browser] = await Promise.all([serveBuiltRenderer(), launchChromium()])
  try {
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
      `  headless Chromium ${browser.version()}, ${String(VIEWPORT.width)}×${String(VIEWPORT.height)}: idle rAF interval p50 ${ms(quantile(idle, 0.5))}, p95 ${ms(quantile(idle, 0.95))}`,
    )
    const results: SizeResult[] = []
    for (const runs of SIZES) {
      const result = await measureSize(browser, renderer, runs)
      results.push(result)
      report.push(
        `  ${runs.toLocaleString('en')} runs (written in ${ms(result.writeMs)}; the list counts ${result.rowsLoaded.toLocaleString('en')}${result.rowsLoaded >= 10_000 ? '+' : ''}):`,
        `    navigation start → first rows painted: ${result.firstRows.map(ms).join(', ')}`,
        `    Runs opened (Ctrl+3) → first rows painted: ${result.sectionToRows.map(ms).join(', ')}`,
        `    scrolling ${String(SCROLL_MS / 1000)} s at ${String(SCROLL_STEP_PX * 60)} px/s: frame time ${spread(result.frameTimes)} over ${String(result.frameTimes.length)} frames; long tasks ${String(result.longTasks)}`,
      )
    }
    const [small, large] = results
    if (small && large) {
      const first = (r: SizeResult) => quantile(r.firstRows, 0.5)
      const p95 = (r: SizeResult) => quantile(r.frameTimes, 0.95)
      // A frame per vsync is the best there is: rAF itself jitters around 16.7 ms, so the idle
      // page's own p95 (measured above, same run) is the floor of the target.
      const frameTarget = Math.max(TARGET_FRAME_MS, quantile(idle, 0.95))
      report.push(
        `  first rows (median) at ${large.runs.toLocaleString('en')}: ${ms(first(large))} (target ≤ ${String(TARGET_FIRST_MS)} ms: ${first(large) <= TARGET_FIRST_MS ? 'met' : 'MISSED'}); ÷ ${small.runs.toLocaleString('en')} runs = ${(first(large) / first(small)).toFixed(2)}`,
        `  p95 frame time scrolling at ${large.runs.toLocaleString('en')}: ${ms(p95(large))} (target ≤ ${String(TARGET_FRAME_MS)} ms, or the idle page's rAF p95 when above it: ${ms(frameTarget)}: ${p95(large) <= frameTarget ? 'met' : 'MISSED'}); ÷ ${small.runs.toLocaleString('en')} runs = ${(p95(large) / p95(small)).toFixed(2)}`,
      )
    }
    report.push(
      `  load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' / ')} (1, 5, 15 min) on 2 cores`,
    )
  } finally {
    await browser.close()
    await renderer.close()
  }
}

const { available } = chromiumAvailability()

describe.runIf(available)('runs view', () => {
  bench('first rows and scrolling: 1,000 against 100,000 runs in the mirror', benchmark, {
    time: 0,
    iterations: 1,
    warmupTime: 0,
    warmupIterations: 0,
  })
})
