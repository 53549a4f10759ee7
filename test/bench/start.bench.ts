import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, bench, describe } from 'vitest'
import { isFreshBuild } from '../../scripts/build/freshness.mjs'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'

/**
 * How fast Atelier starts, each figure as a whole process timed from its spawn, against the same
 * machine's bare `node -e 0` timed in turn with it (A B A B …), so a busy machine moves both:
 * - `atelier version`: spawn to exit;
 * - `atelier sandbox`: spawn to its ready line (a fresh data folder each time: a new user's start);
 * - `atelier web`, warm home: spawn to the Flows screen interactive in Chromium (its "New flow
 *   name" field is in the page), the home started once before;
 * - `atelier sync` with nothing new, 3,000 runs mirrored: spawn to exit, against a sandbox in a
 *   process of its own that holds them, the key in a real Secret Service.
 * Medians of RUNS runs after one warm-up. The command runs from the build in out/ (the bench
 * says so when out/ does not match the sources: it then times the sources through tsx).
 */

const RUNS = Number(process.env.ATELIER_BENCH_RUNS ?? 7)
const root = join(import.meta.dirname, '..', '..')
const atelier = join(root, 'bin', 'atelier.mjs')
const FLOWS_FIELD = 'New flow name'

interface Figure {
  name: string
  times: number[]
  baseline: number[]
}
const figures: Figure[] = []
const temp = mkdtempSync(join(tmpdir(), 'atelier-start-bench-'))
let folders = 0
const folder = () => join(temp, String(++folders))

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? NaN
}

afterAll(() => {
  rmSync(temp, { recursive: true, force: true })
  const built = isFreshBuild(root, 'main') ? 'from the build in out/' : 'from the SOURCES (tsx)'
  const lines = figures.map((figure) => {
    const time = median(figure.times)
    const base = median(figure.baseline)
    const ratios = figure.times.map((t, i) => t / (figure.baseline[i] ?? NaN))
    return `${figure.name.padEnd(44)} ${(time / 1000).toFixed(3).padStart(7)} s   node -e 0 ${(base / 1000).toFixed(3)} s   ratio ${median(ratios).toFixed(2)}× (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})`
  })
  console.log(`\nStart-up, ${atelier} ${built}; medians of ${RUNS} runs:\n${lines.join('\n')}\n`)
})

/** Spawn to exit, in milliseconds. */
function timeExit(command: string, args: string[], env = process.env): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] })
    let errors = ''
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0) resolve(performance.now() - started)
      else reject(new Error(`${args.join(' ')} exited ${String(code)}: ${errors}`))
    })
  })
}

const nodeBaseline = (env = process.env) => timeExit(process.execPath, ['-e', '0'], env)

/** The first line a process prints, with the time from spawn; the process keeps running. */
function firstLine(
  args: string[],
): Promise<{ line: string; ms: number; child: ChildProcessWithoutNullStreams }> {
  const started = performance.now()
  const child = spawn(process.execPath, [atelier, ...args], { cwd: root, env: process.env })
  return new Promise((resolve, reject) => {
    let out = ''
    let errors = ''
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const end = out.indexOf('\n')
      if (end >= 0) resolve({ line: out.slice(0, end), ms: performance.now() - started, child })
    })
    child.once('exit', (code) => {
      reject(new Error(`atelier ${args.join(' ')} exited ${String(code)} first: ${errors}`))
    })
  })
}

function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve()
      return
    }
    child.once('exit', () => {
      resolve()
    })
    child.kill('SIGINT')
  })
}

/** One warm-up, then RUNS pairs of (measured, baseline) in turn. */
async function measure(
  name: string,
  once: () => Promise<number>,
  baseline: () => Promise<number> = nodeBaseline,
): Promise<void> {
  await once()
  const figure: Figure = { name, times: [], baseline: [] }
  for (let run = 0; run < RUNS; run++) {
    figure.times.push(await once())
    figure.baseline.push(await baseline())
  }
  figures.push(figure)
}

const single = { time: 0, iterations: 1, warmupTime: 0, warmupIterations: 0 }

describe('start-up', () => {
  bench(
    'atelier version',
    async () => {
      await measure('atelier version (spawn → exit)', () =>
        timeExit(process.execPath, [atelier, 'version']),
      )
    },
    single,
  )

  bench(
    'atelier sandbox',
    async () => {
      await measure('atelier sandbox (spawn → ready line)', async () => {
        const { ms, child } = await firstLine(['sandbox', '--port', '0', '--data', folder()])
        await stop(child)
        return ms
      })
    },
    single,
  )

  const chromium = chromiumAvailability()
  bench.skipIf(!chromium.available)(
    'atelier web',
    async () => {
      const home = folder()
      const browser: Browser = await launchChromium()
      try {
        await measure('atelier web, warm home (spawn → Flows screen)', async () => {
          // The browser is open and waiting, as a user's is: only Atelier's part is timed.
          const context = await browser.newContext()
          const page = await context.newPage()
          const spawned = performance.now()
          const { line, child } = await firstLine(['web', '--port', '0', '--home', home])
          try {
            await page.goto(line)
            await page.getByLabel(FLOWS_FIELD).waitFor({ timeout: 60_000 })
            return performance.now() - spawned
          } finally {
            await context.close()
            await stop(child)
          }
        })
      } finally {
        await browser.close()
      }
    },
    single,
  )

  const keychain = secretServiceAvailability()
  bench.skipIf(!keychain.available)(
    'atelier sync, nothing new',
    async () => {
      const session = await startSecretService()
      const sandbox = await firstLine([
        'sandbox',
        '--port',
        '0',
        '--seed-runs',
        '3000',
        '--data',
        folder(),
      ])
      const home = folder()
      try {
        const ready = JSON.parse(sandbox.line) as { url: string; keys: { admin: string } }
        const cli = (args: string[], input?: string) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, [atelier, '--home', home, ...args], {
              cwd: root,
              env: session.env,
            })
            let errors = ''
            child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
            child.stdout.resume()
            child.once('exit', (code) => {
              if (code === 0) resolve()
              else reject(new Error(`atelier ${args.join(' ')}: ${errors}`))
            })
            child.stdin.end(input ?? '')
          })
        await cli(['profile', 'add', 'bench', '--base-url', ready.url], ready.keys.admin)
        // The first sync mirrors the 3,000 runs; the ones measured find nothing new.
        await cli(['sync'])
        await measure(
          'atelier sync, nothing new, 3,000 runs (spawn → exit)',
          () => timeExit(process.execPath, [atelier, '--home', home, 'sync'], session.env),
          () => nodeBaseline(session.env),
        )
      } finally {
        await stop(sandbox.child)
        await session.close()
      }
    },
    single,
  )
})
