import { mkdirSync } from 'node:fs'
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Evaluation } from '../../src-shared/api'
import { evaluationListSchema } from '../../src-shared/domain/evaluations'
import { sandboxBackend } from '../../src-main/workspace'
import type { Core } from '../../src-main/core'
import { seedHistory } from '../../src-main/sandbox/runs'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const { available } = chromiumAvailability()
const screenshots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')

/**
 * The service's address, relayed byte for byte to the sandbox, so that it can go away and come
 * back on the same port. Stopped, it refuses connections and cuts the open ones, as a stopped
 * service does. It stands in for stopping the sandbox itself because this test needs the service
 * back with the same key: a sandbox started again on the same data folder and port keeps its
 * organizations and records, but mints its keys afresh and deletes the old ones (only their
 * hashes are stored), so the key the app's core was opened with is answered 401 — the app would
 * say the key is not valid instead of coming back online, and the rating would never be sent.
 * (test/e2e/runs.test.ts, which does not need the service back, stops the sandbox itself.)
 */
interface Relay {
  url: string
  stop: () => Promise<void>
  start: () => Promise<void>
}

async function relayTo(target: string): Promise<Relay> {
  const targetPort = Number(new URL(target).port)
  const sockets = new Set<Socket>()
  let server: Server | null = null
  let port = 0
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1')
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('error', () => undefined)
          socket.on('close', () => {
            sockets.delete(socket)
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      listening.once('error', reject)
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as AddressInfo).port
        server = listening
        resolve()
      })
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      sockets.clear()
      if (server) {
        server.close(() => {
          resolve()
        })
      } else resolve()
      server = null
    })
  await start()
  return { url: `http://127.0.0.1:${port}`, start, stop }
}

describe.runIf(available)('the Evaluations section in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let relay: Relay
  let core: Core

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true })
    app = await startApp({
      name: 'evaluations',
      service: () => startTestSandbox({ latencyMs: 0 }),
      stopService: async (started) => {
        await relay.stop()
        await started.close()
      },
    })
    sandbox = app.service
    await seedHistory(sandbox.services, sandbox.orgId, 400)
    relay = await relayTo(sandbox.url)
    const direct = sandboxBackend(sandbox)
    const backend = {
      ...direct,
      info: { ...direct.info, url: relay.url },
      close: () => Promise.resolve(),
    }
    // One attempt a request: a stopped service is known to be offline at once.
    core = app.openCore(backend, { client: { retry: { maxAttempts: 1 } } })
    expect((await core.syncNow()).state).toBe('idle')
  }, 180_000)

  afterAll(async () => {
    await app.close()
  })

  async function serviceCopy(id: string): Promise<Evaluation> {
    const answer = await sandbox.call('GET', `/v1/evaluations/${id}`)
    return answer.body as Evaluation
  }

  /** The picture on the page has loaded from the media store. */
  async function pictureShown(page: Page) {
    await expect
      .poll(() => page.locator('.evaluation-picture img').count(), { timeout: 15_000 })
      .toBe(1)
    await page.waitForFunction(
      `document.querySelector('.evaluation-picture img')?.complete === true`,
    )
  }

  it(
    'browses and opens evaluations, rates one offline, sends it once back, and submits one',
    { timeout: 150_000 },
    async () => {
      const { page, errors } = await app.openPage({ viewport: { width: 1360, height: 860 } })
      const nav = page.getByRole('navigation', { name: 'Sections' })
      await nav.getByRole('button', { name: 'Evaluations' }).click()

      const list = page.getByRole('listbox', { name: 'Evaluations' })
      const rows = list.getByRole('option')
      await expect.poll(() => rows.count()).toBeGreaterThan(10)
      await page.screenshot({ path: join(screenshots, 'evaluations-light.png') })

      // The newest completed evaluation of a run that has judges (its picture is in the media
      // store) and no rating yet: the seeded history rates some at random.
      const { items } = core.evaluations.list(evaluationListSchema.parse({ limit: 200 }))
      const index = items.findIndex((row) => {
        if (row.status !== 'completed' || row.runId === null || row.rating !== null) return false
        const detail = core.evaluations.get({ id: row.id })
        return detail.image.sha256 !== null && detail.judges.length > 2
      })
      expect(index).toBeGreaterThanOrEqual(0)
      expect(index).toBeLessThan(12)
      const chosen = items[index]?.id as string
      await rows.nth(index).click()
      const judges = page.getByRole('region', { name: 'Judges' })
      await expect.poll(() => judges.getByRole('article').count()).toBeGreaterThan(2)
      await pictureShown(page)
      await page.screenshot({ path: join(screenshots, 'evaluation-page-light.png') })
      await page.emulateMedia({ colorScheme: 'dark' })
      await page.screenshot({ path: join(screenshots, 'evaluation-page-dark.png') })
      await page.emulateMedia({ colorScheme: 'light' })

      // The service goes away: the sync says offline, and the rating waits in the outbox.
      const sync = page.getByRole('region', { name: 'Sync' })
      await relay.stop()
      await sync.getByRole('button', { name: 'Sync now' }).click()
      await expect
        .poll(() => sync.getByRole('status').textContent())
        .toBe('Offline — showing what was synced')
      const feedback = page.getByRole('region', { name: 'Your feedback' })
      await feedback.getByRole('button', { name: 'Thumbs down' }).click()
      await feedback.getByRole('textbox').fill('The horizon is tilted')
      await feedback.getByRole('button', { name: 'Send thumbs down' }).click()
      await expect
        .poll(() => feedback.getByRole('status').textContent())
        .toBe('Pending — will be sent when online')
      expect(
        await feedback.getByRole('button', { name: 'Thumbs down' }).getAttribute('aria-pressed'),
      ).toBe('true')
      await page.screenshot({ path: join(screenshots, 'evaluation-feedback-pending-light.png') })
      expect((await serviceCopy(chosen)).feedback_is_positive).not.toBe(false)

      // Offline, the list still browses and searches, and the row shows the waiting rating.
      await page.keyboard.press('Escape')
      await expect.poll(() => list.isVisible()).toBe(true)
      const row = list.locator(`#evaluation-row-${chosen}`)
      expect(await row.getByLabel('Thumbs down (waiting to be sent)').count()).toBe(1)
      await page.getByRole('searchbox', { name: 'Search the evaluations' }).fill('lighthouse')
      await expect
        .poll(async () => (await rows.allTextContents()).every((t) => /lighthouse/i.test(t)))
        .toBe(true)
      expect(await rows.count()).toBeGreaterThan(0)
      await rows.first().click()
      await expect
        .poll(() => page.locator('.evaluation-heading').textContent())
        .toMatch(/lighthouse/i)
      await page.keyboard.press('Escape')
      await page.getByRole('button', { name: 'Clear' }).click()
      await expect.poll(() => list.locator(`#evaluation-row-${chosen}`).count()).toBe(1)
      await list.locator(`#evaluation-row-${chosen}`).click()
      await expect.poll(() => feedback.getByRole('status').count()).toBe(1)

      // Back: the sync's replay sends it, and the page says so without being asked.
      await relay.start()
      await sync.getByRole('button', { name: 'Retry' }).click()
      await expect.poll(() => feedback.getByRole('status').count(), { timeout: 20_000 }).toBe(0)
      expect(await serviceCopy(chosen)).toMatchObject({
        feedback_is_positive: false,
        feedback_reason: 'The horizon is tilted',
      })
      expect(await feedback.textContent()).toContain('The horizon is tilted')

      // Submit one: an asset of the organization, quick.
      await page.keyboard.press('Escape')
      await page.getByRole('button', { name: 'Submit an evaluation…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Submit an evaluation' })
      const assets = dialog.getByRole('listbox', { name: 'Image assets' }).getByRole('option')
      await expect.poll(() => assets.count()).toBeGreaterThan(0)
      await assets.first().click()
      await dialog.getByText('Quick — fewer judges, cheaper').click()
      await dialog
        .getByLabel('Prompt the image was made from (optional)')
        .fill('a studio test card')
      await page.screenshot({ path: join(screenshots, 'evaluation-submit-light.png') })
      await dialog.getByRole('button', { name: 'Submit' }).click()
      await expect.poll(() => dialog.count()).toBe(0)
      await expect
        .poll(() => page.locator('.evaluation-heading').textContent())
        .toBe('a studio test card')
      await expect
        .poll(() => page.locator('.evaluation-facts').textContent(), { timeout: 30_000 })
        .toContain('Completed')
      await expect.poll(() => judges.getByRole('article').count()).toBeGreaterThan(0)

      expect(errors).toEqual([])
      await page.close()
    },
  )
})
