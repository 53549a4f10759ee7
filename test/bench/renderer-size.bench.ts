import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize, sep } from 'node:path'
import { gzipSync } from 'node:zlib'
import react from '@vitejs/plugin-react'
import type { Browser } from 'playwright-core'
import { build, type InlineConfig } from 'vite'
import { bench, describe } from 'vitest'
import { contentSecurityPolicy } from '../../src-main/app/policy'
import { RENDERER_BUILD_OPTIONS } from '../../src-renderer/build-options.mjs'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'

/**
 * How much JavaScript the app's first screen (the shell and the flow list) loads, against the
 * bundle it loaded before code splitting, both built in this run by the same Vite from the same
 * sources:
 * - `before`: the renderer as it was built until now (electron-vite's defaults): one bundle,
 *   unminified, every screen in it (`codeSplitting: false` inlines the lazy screens' imports);
 * - `now`: the shipped build, src-renderer/build-options.mjs (minified; the editor and every
 *   section but Flows in chunks of their own).
 * Each build is served on 127.0.0.1 with the app's CSP and opened in headless Chromium, LOADS
 * times, each in a fresh context (an empty cache), with no `window.atelier` (the flow list then
 * shows its not-connected state: the same code runs). The first screen counts as interactive
 * once the "New flow name" field is in the page (a MutationObserver notes the time; React has
 * its listeners on the root by then). The JavaScript loaded before it is every script whose
 * fetch started before that moment (resource timing); what comes after (the editor's chunk,
 * fetched when the page is idle) is printed apart. Sizes are the files' bytes and `gzip -9` of
 * them (the browser mode serves them uncompressed; gzip is the usual yardstick). The time to
 * the first screen is printed too, as a median: it varies with the machine's load.
 */

const LOADS = Number(process.env.ATELIER_BENCH_LOADS ?? 5)
const root = join(import.meta.dirname, '..', '..')
const FIRST_SCREEN_FIELD = 'New flow name'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

interface Variant {
  name: string
  build: NonNullable<InlineConfig['build']>
}

const VARIANTS: Variant[] = [
  {
    name: 'before (one unminified bundle)',
    build: {
      minify: false,
      cssMinify: false,
      target: 'es2022',
      modulePreload: { polyfill: false },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  },
  { name: 'now (src-renderer/build-options.mjs)', build: RENDERER_BUILD_OPTIONS },
]

/** Builds the renderer with these options into a temp folder, React's production build. */
async function buildRenderer(options: Variant['build']): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'atelier-renderer-size-'))
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await build({
      root: join(root, 'src-renderer'),
      base: './',
      configFile: false,
      mode: 'production',
      logLevel: 'warn',
      plugins: [react()],
      build: { ...options, outDir, emptyOutDir: true },
    })
  } finally {
    process.env.NODE_ENV = nodeEnv
  }
  return outDir
}

/** The build, read-only on 127.0.0.1, with the app's CSP. */
async function serve(outDir: string): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    const file = normalize(join(outDir, path === '/' ? 'index.html' : decodeURIComponent(path)))
    if (!file.startsWith(outDir + sep)) {
      response.writeHead(404).end()
      return
    }
    const stream = createReadStream(file)
    stream.on('open', () => {
      response.writeHead(200, {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Content-Security-Policy': contentSecurityPolicy(),
      })
      stream.pipe(response)
    })
    stream.on('error', () => {
      response.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server }
}

interface Load {
  /** Build paths (`assets/…js`) of the scripts fetched before the first screen, in order. */
  before: string[]
  /** Those fetched after it, until the network was idle. */
  after: string[]
  firstScreenMs: number
}

/** Notes when the first screen's field shows, before any of the page's scripts runs. */
const OBSERVER = `
  new MutationObserver((_, observer) => {
    if (document.querySelector('input[aria-label="${FIRST_SCREEN_FIELD}"]')) {
      window.__firstScreenAt = performance.now()
      observer.disconnect()
    }
  }).observe(document, { childList: true, subtree: true })
`

async function load(browser: Browser, url: string): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  try {
    const page = await context.newPage()
    await page.addInitScript(OBSERVER)
    await page.goto(url)
    await page.getByRole('textbox', { name: FIRST_SCREEN_FIELD }).waitFor()
    await page.waitForLoadState('networkidle')
    const firstScreenMs = await page.evaluate<number>('window.__firstScreenAt')
    const scripts = await page.evaluate<{ name: string; startTime: number }[]>(
      `performance.getEntriesByType('resource').map(({ name, startTime }) => ({ name, startTime }))`,
    )
    const js = scripts
      .filter(({ name }) => new URL(name).pathname.endsWith('.js'))
      .map(({ name, startTime }) => ({ path: new URL(name).pathname.slice(1), startTime }))
    return {
      before: js.filter((s) => s.startTime < firstScreenMs).map((s) => s.path),
      after: js.filter((s) => s.startTime >= firstScreenMs).map((s) => s.path),
      firstScreenMs,
    }
  } finally {
    await context.close()
  }
}

interface Sizes {
  raw: number
  gzip: number
}

function sizeOf(outDir: string, paths: readonly string[]): Sizes {
  let raw = 0
  let gzip = 0
  for (const path of paths) {
    const bytes = readFileSync(join(outDir, path))
    raw += bytes.length
    gzip += gzipSync(bytes, { level: 9 }).length
  }
  return { raw, gzip }
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

interface Result {
  variant: Variant
  outDir: string
  first: Load
  firstScreenMs: number
  before: Sizes
  after: Sizes
  all: Sizes
}

async function measure(browser: Browser, variant: Variant): Promise<Result> {
  const outDir = await buildRenderer(variant.build)
  const { url, server } = await serve(outDir)
  try {
    const loads: Load[] = []
    for (let i = 0; i < LOADS; i++) loads.push(await load(browser, url))
    const first = loads[0] as Load
    const all = readdirSync(join(outDir, 'assets'))
      .filter((name) => name.endsWith('.js'))
      .map((name) => `assets/${name}`)
    return {
      variant,
      outDir,
      first,
      firstScreenMs: median(loads.map((l) => l.firstScreenMs)),
      before: sizeOf(outDir, first.before),
      after: sizeOf(outDir, first.after),
      all: sizeOf(outDir, all),
    }
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve()
      })
    })
  }
}

async function benchmark() {
  const browser = await launchChromium()
  const results: Result[] = []
  try {
    for (const variant of VARIANTS) results.push(await measure(browser, variant))
    const [before, now] = results
    if (!before || !now) return
    const react = now.first.before.filter((path) => /\/react-[\w-]+\.js$/.test(path))
    const reactSize = sizeOf(now.outDir, react)
    const lines = [
      `renderer size: JavaScript loaded before the first screen (the flow list) is interactive, headless Chromium ${browser.version()}, ${LOADS} loads each, gzip -9`,
    ]
    for (const result of results) {
      lines.push(
        `  ${result.variant.name}: ${kb(result.before.gzip)} gzipped (${kb(result.before.raw)} raw) in ${result.first.before.length} file(s): ${result.first.before.map((path) => path.replace('assets/', '')).join(', ')}`,
        `    fetched after, when idle: ${result.first.after.length === 0 ? 'nothing' : `${kb(result.after.gzip)} gzipped in ${result.first.after.map((path) => path.replace('assets/', '')).join(', ')}`}`,
        `    the whole build's JavaScript: ${kb(result.all.gzip)} gzipped (${kb(result.all.raw)} raw); first screen after ${result.firstScreenMs.toFixed(0)} ms (median)`,
      )
    }
    lines.push(
      `  now ÷ before, gzipped before the first screen: ${(now.before.gzip / before.before.gzip).toFixed(3)} (${kb(before.before.gzip)} → ${kb(now.before.gzip)}; goal ≤ 200 kB: ${now.before.gzip <= 200_000 ? 'met' : 'MISSED'})`,
      `  now ÷ before, raw bytes before the first screen: ${(now.before.raw / before.before.raw).toFixed(3)}`,
      `  React + ReactDOM alone (the react chunk), the floor: ${kb(reactSize.gzip)} gzipped; the first screen loads ${(now.before.gzip / reactSize.gzip).toFixed(2)} × that`,
      `  time to the first screen, now ÷ before: ${(now.firstScreenMs / before.firstScreenMs).toFixed(2)} (${before.firstScreenMs.toFixed(0)} → ${now.firstScreenMs.toFixed(0)} ms, varies with load)`,
    )
    console.log(lines.join('\n'))
  } finally {
    await browser.close()
    for (const result of results) rmSync(result.outDir, { recursive: true, force: true })
  }
}

const { available } = chromiumAvailability()

describe.runIf(available)('renderer size', () => {
  bench(
    'JavaScript before the first screen: one unminified bundle against the split build',
    benchmark,
    {
      time: 0,
      iterations: 1,
      warmupTime: 0,
      warmupIterations: 0,
    },
  )
})
