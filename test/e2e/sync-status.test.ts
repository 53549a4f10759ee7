import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SyncStatus } from '../../src-shared/domain/sync'
import { SANDBOX_PROFILE, sandboxBackend, type Backend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { openLogger, type Logger } from '../../src-main/log'
import { seedHistory } from '../../src-main/sandbox/runs'
import { SYNC_COLLECTIONS } from '../../src-main/sync'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import { bridgeToMainProcess } from '../helpers/page-bridge'
import { serveBuiltRenderer, type ServedRenderer } from '../helpers/renderer-build'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')

describe.runIf(available)('the sync status in the sidebar, in Chromium', () => {
  let browser: Browser
  let renderer: ServedRenderer
  let sandbox: TestSandbox
  let scratch: string
  const cores: { core: Core; logger: Logger }[] = []

  /** A real core on a temp home, talking to the real sandbox with `backend`'s key. */
  function startCore(backend: Backend): Core {
    const home = mkdtempSync(join(scratch, 'home-'))
    const logger = openLogger({ home, level: 'debug' })
    // One attempt a request, so that a closed service is known to be offline at once.
    const core = openCore({ home, backend, logger, client: { retry: { maxAttempts: 1 } } })
    cores.push({ core, logger })
    return core
  }

  async function openApp(core: Core, errors: string[]): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.on('pageerror', (error) => errors.push(error.message))
    await bridgeToMainProcess(page, () => sandboxBackend(sandbox).info, { core })
    await page.goto(renderer.url)
    return page
  }

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    scratch = mkdtempSync(join(tmpdir(), 'atelier-e2e-sync-'))
    ;[renderer, browser, sandbox] = await Promise.all([
      serveBuiltRenderer(),
      launchChromium(),
      startTestSandbox({ latencyMs: 0 }),
    ])
    await seedHistory(sandbox.services, sandbox.orgId, 1000)
  }, 120_000)

  afterAll(async () => {
    for (const { core, logger } of cores) {
      await core.close()
      logger.close()
    }
    await browser.close()
    await renderer.close()
    await sandbox.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('says when the key is refused, and leads to Settings', async () => {
    const core = startCore({ ...sandboxBackend(sandbox), apiKey: sandbox.keys.otherOrg })
    const errors: string[] = []
    const page = await openApp(core, errors)
    const area = page.getByRole('region', { name: 'Sync' })
    await expect.poll(() => area.getByRole('status').textContent()).toBe('Key refused')
    expect(await area.getAttribute('title')).toContain('ORGANIZATION_MEMBERSHIP_REQUIRED')
    await page.screenshot({ path: join(artifacts, 'sync-key-refused-light.png') })
    await area.getByRole('button', { name: 'Check the key in Settings' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings')
    expect(errors).toEqual([])
    await page.close()
  })

  it(
    'shows the sync at start, its progress on demand, then "offline" once the service is gone',
    { timeout: 90_000 },
    async () => {
      const core = startCore({ ...sandboxBackend(sandbox), close: () => Promise.resolve() })
      let started = 0
      core.onEvent((event, payload) => {
        const status = payload as SyncStatus
        if (event === 'sync.status' && status.state === 'syncing' && status.progress === null) {
          started++
        }
      })
      // The sync at start, before the window opens: the window then finds it done.
      expect((await core.syncNow()).state).toBe('idle')
      const errors: string[] = []
      const page = await openApp(core, errors)
      const area = page.getByRole('region', { name: 'Sync' })
      const status = area.getByRole('status')
      const bar = area.getByRole('progressbar', { name: 'Sync progress' })
      await expect.poll(() => status.textContent()).toBe('Synced just now')
      expect(await bar.count()).toBe(0)
      expect(await area.getAttribute('title')).toMatch(/^Next sync in 5 min\.$/)
      await page.screenshot({ path: join(artifacts, 'sync-idle-light.png') })

      // The runs walked again (as after a rebuilt mirror), slowly, so that the progress is seen.
      core.databases.mirror.syncCursors.reset({
        profile: SANDBOX_PROFILE,
        orgId: sandbox.orgId,
        collection: 'runs',
      })
      const faults = await sandbox.call('PUT', '/_sandbox/faults', {
        body: { rules: [{ operationId: 'listRuns', latencyMs: 1_500, times: 2 }] },
      })
      expect(faults.status).toBe(200)
      const syncNow = area.getByRole('button', { name: 'Sync now' })
      await syncNow.click()
      await expect.poll(() => bar.count()).toBe(1)
      await expect.poll(() => status.textContent()).toBe('Syncing runs…')
      expect(await syncNow.isDisabled()).toBe(true)
      // The first page of 500 is written while the second is slow to come.
      const valueText = () => bar.getAttribute('aria-valuetext', { timeout: 1_000 })
      await expect.poll(valueText, { timeout: 10_000 }).toBe('runs: 500 / 1,000')
      expect(await bar.getAttribute('aria-valuenow')).toBe('500')
      expect(await bar.getAttribute('aria-valuemax')).toBe('1000')
      const step = SYNC_COLLECTIONS.indexOf('runs') + 1
      expect(await area.textContent()).toContain(
        // The pull's collections, then the outbox replay and the media downloads.
        `500 / 1,000 · step ${step} of ${SYNC_COLLECTIONS.length + 2}`,
      )
      // The bar eases to its width: the picture is taken once it got there.
      // Written as page source so the test project needs no DOM typings.
      await page.evaluate(
        `Promise.all(document.querySelector('.sync-bar > span').getAnimations().map((a) => a.finished))`,
      )
      await page.screenshot({ path: join(artifacts, 'sync-progress-light.png') })

      await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('Synced just now')
      expect(await bar.count()).toBe(0)
      const runs = core.databases.mirror.db.prepare('SELECT count(*) FROM runs').pluck().get()
      expect(runs).toBe(1000)

      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('button', { name: 'Settings' })
        .click()
      await page.getByText('Dark', { exact: true }).click()
      await page.keyboard.press('Control+1')
      await page.screenshot({ path: join(artifacts, 'sync-idle-dark.png') })

      // The service goes away: the next sync says offline, and what was synced is still there.
      await sandbox.close()
      await syncNow.click()
      await expect.poll(() => status.textContent()).toBe('Offline — showing what was synced')
      expect(await area.getAttribute('title')).toMatch(/Next sync in (29|30) s\.$/)
      const retry = area.getByRole('button', { name: 'Retry' })
      expect(await retry.count()).toBe(1)
      await page.screenshot({ path: join(artifacts, 'sync-offline-dark.png') })
      const retried = started
      await retry.click()
      await expect.poll(() => started).toBe(retried + 1)
      await expect.poll(() => status.textContent()).toBe('Offline — showing what was synced')
      expect(core.databases.mirror.db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(1000)

      // F5 syncs too (and does not reload the page: the store keeps its theme and section).
      await expect.poll(() => core.syncStatus().state).toBe('offline')
      await page.keyboard.press('F5')
      await expect.poll(() => started).toBe(retried + 2)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Flows')

      expect(errors).toEqual([])
      await page.close()
    },
  )
})
