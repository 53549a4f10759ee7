import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import type { Core } from '../../src-main/core'
import { seedHistory } from '../../src-main/sandbox/runs'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The Runs section in Chromium: the shipped renderer bundle, the app's real core (its mirror,
 * its sync) behind the IPC bridge, a real sandbox with a seeded history. Browse, filter, search
 * and open runs; then the sandbox itself stops (it does not come back in this test) and the
 * same still works from the mirror, a run's page and its log included.
 */

const { available } = chromiumAvailability()
const screenshots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')
const SEEDED = 400

describe.runIf(available)('the runs list in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let core: Core

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true })
    app = await startApp({
      name: 'runs',
      service: () => startTestSandbox({ latencyMs: 0 }),
      stopService: (started) => started.close(),
    })
    sandbox = app.service
    await seedHistory(sandbox.services, sandbox.orgId, SEEDED)
    // One attempt a request, so that the stopped sandbox is known to be offline at once.
    core = app.openCore(
      { ...sandboxBackend(sandbox), close: () => Promise.resolve() },
      { client: { retry: { maxAttempts: 1 } } },
    )
    expect((await core.syncNow()).last?.outcome).toBe('ok')
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  it(
    'browses, filters, searches and opens synced runs, online and then offline',
    { timeout: 120_000 },
    async () => {
      const { page, errors } = await app.openPage({
        viewport: { width: 1440, height: 900 },
        until: 'drawn',
      })
      const main = page.getByRole('main')
      // Written as page source so the test project needs no DOM typings.
      const shownIds = () =>
        page.evaluate<string[]>(
          `[...document.querySelectorAll('[data-run-id]')].map((row) => row.dataset.runId)`,
        )
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('button', { name: 'Runs' })
        .click()
      const grid = main.getByRole('grid', { name: 'Runs' })
      const rows = grid.locator('[data-run-id]')
      await expect.poll(() => rows.count()).toBeGreaterThan(10)
      expect(await main.locator('.runs-count').textContent()).toBe(`${String(SEEDED)} runs`)
      // Newest first, as the mirror holds them.
      const newest = core.runs.list({ limit: 3 }).items.map((row) => row.id)
      expect(await shownIds().then((ids) => ids.slice(0, 3))).toEqual(newest)
      await page.screenshot({ path: join(screenshots, 'runs-light.png') })

      // Status: only failed runs, each showing why.
      await main.getByRole('button', { name: 'Failed', exact: true }).click()
      const failed = core.runs.list({ statuses: ['failed'], limit: 500 })
      await expect
        .poll(() => main.locator('.runs-count').textContent())
        .toBe(`${String(failed.total?.count)} runs`)
      const statuses = await grid.locator('[data-run-id] .status-chip').allTextContents()
      expect(new Set(statuses)).toEqual(new Set(['Failed']))
      await main.getByRole('button', { name: 'Failed', exact: true }).click()

      // Search: the words of one run's prompt find it; Ctrl+F goes to the field.
      const target = core.runs
        .list({ statuses: ['succeeded'], limit: 50 })
        .items.find((row) => (row.text ?? '').split(' ').length >= 3)
      expect(target).toBeDefined()
      const words = (target?.text ?? '').split(/\s+/).slice(0, 4).join(' ')
      const expected = core.runs.list({ text: words, limit: 500 })
      await page.keyboard.press('Control+f')
      const search = main.getByRole('searchbox', { name: 'Search runs' })
      expect(
        await page.evaluate<boolean>(
          "document.activeElement?.getAttribute('aria-label') === 'Search runs'",
        ),
      ).toBe(true)
      await page.keyboard.type(words)
      await expect
        .poll(() => main.locator('.runs-count').textContent())
        .toBe(expected.total?.count === 1 ? '1 run' : `${String(expected.total?.count)} runs`)
      await expect.poll(() => shownIds()).toContain(target?.id)

      // Open it with the keyboard: the run page takes the list's place.
      const index = expected.items.findIndex((row) => row.id === target?.id)
      await grid.focus()
      for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown')
      await page.keyboard.press('Enter')
      await expect.poll(() => main.locator('.runs-list').isHidden()).toBe(true)
      // The run page's own module draws it, where the list was.
      expect(await main.locator('.runs-section > :not(.runs-list)').count()).toBe(1)
      // Ctrl+F comes back to the list's search, the list as it was.
      await page.keyboard.press('Control+f')
      await expect.poll(() => main.locator('.runs-list').isVisible()).toBe(true)
      await search.fill('')

      // The service goes away: the list says so, and still browses and searches the mirror.
      await sandbox.close()
      expect((await core.syncNow()).state).toBe('offline')
      await expect.poll(() => main.getByText('Offline — showing what was synced').count()).toBe(1)
      await expect
        .poll(() => main.locator('.runs-count').textContent())
        .toBe(`${String(SEEDED)} runs`)
      await search.fill(words)
      await expect.poll(() => shownIds()).toContain(target?.id)
      await search.fill('')
      await expect
        .poll(() => main.locator('.runs-count').textContent())
        .toBe(`${String(SEEDED)} runs`)
      // Scrolling to the end loads the next pages by their cursor, offline too.
      const oldest = core.runs.list({ limit: SEEDED }).items.at(-1)?.id
      await expect
        .poll(
          async () => {
            await page.evaluate(`{
              const scroll = document.querySelector('.runs-scroll')
              scroll.scrollTop = scroll.scrollHeight
            }`)
            return rows.last().getAttribute('data-run-id')
          },
          { timeout: 15_000 },
        )
        .toBe(oldest)
      await page.evaluate(`document.querySelector('.runs-scroll').scrollTop = 0`)

      // A run's page opens offline too, from the mirror, with its log. One seeded run in ten has
      // log lines: among the ten newest (their details came with the sync) there is one.
      const logged = core.runs
        .list({ limit: 10 })
        .items.map((row) => core.runPage.get({ runId: row.id }))
        .find((detail) => detail.logs.items.length > 0)
      expect(logged).toBeDefined()
      const runId = logged?.run.id ?? ''
      const lines = logged?.logs.items.filter((line) => line.level_code !== 'debug') ?? []
      expect(lines.length).toBeGreaterThan(1)
      const row = grid.locator(`[data-run-id="${runId}"]`)
      await expect.poll(() => row.count()).toBe(1)
      await row.click()
      const runPage = main.locator('.run-page')
      await expect.poll(() => runPage.locator('.run-id').textContent()).toBe(runId)
      // The service was asked and could not answer: the page says what it shows.
      await expect
        .poll(() => runPage.locator('.run-stale').textContent())
        .toMatch(/^Showing the run as it was last synced\. The service cannot be reached/)
      const log = runPage.getByRole('log', { name: 'Log lines' })
      await expect.poll(() => log.textContent()).toContain(lines[0]?.message)
      expect(await log.textContent()).toContain(lines.at(-1)?.message)
      expect(await runPage.locator('.run-title-line h2').textContent()).toBe(logged?.run.model_slug)
      await page.keyboard.press('Escape')
      await expect.poll(() => main.locator('.runs-list').isVisible()).toBe(true)
      expect(await runPage.count()).toBe(0)

      // The dark theme, from Settings, and back.
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('button', { name: 'Settings' })
        .click()
      await page.getByText('Dark', { exact: true }).click()
      await page.keyboard.press('Control+3')
      await expect.poll(() => rows.count()).toBeGreaterThan(10)
      await main.getByRole('button', { name: 'Succeeded', exact: true }).click()
      await expect
        .poll(() => grid.locator('[data-run-id] .status-chip').first().textContent())
        .toBe('Succeeded')
      await page.screenshot({ path: join(screenshots, 'runs-dark.png') })

      expect(errors).toEqual([])
      await page.close()
    },
  )
})
