import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Core, Timers } from '../../src-main/core'
import { startSandboxApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import type { TestSandbox } from '../helpers/sandbox'

/**
 * Write-through as a person sees it: a flow run in the editor, then Runs lists its runs and the
 * sidebar's balance and the editor's agree on the charge, with no sync at all (the background
 * sync's timers never fire, and nothing presses "Sync now").
 */

const { available } = chromiumAvailability()
const WAIT = { timeout: 30_000, interval: 50 }
const NO_TIMERS: Timers = { setTimeout: () => null, clearTimeout: () => undefined }
const FLOW = 'Kite and boat'

describe.runIf(available)('what the app did shows at once, in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let home: string
  let core: Core
  let page: Page
  let errors: string[] = []

  beforeAll(async () => {
    // No sync ever runs, so the page is only waited for until the shell is drawn.
    ;({ app, sandbox, core, page, errors } = await startSandboxApp('write-through', {
      sandbox: { latencyMs: 0 },
      core: { timers: NO_TIMERS, firstSyncAfterMs: 3_600_000 },
      page: { viewport: { width: 1440, height: 900 }, until: 'drawn' },
    }))
    home = app.home
    page.setDefaultTimeout(10_000)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  const credits = (micro: number) => `${(micro / 1_000_000).toFixed(4)} credits`
  const serviceBalance = async () => {
    const answer = await sandbox.call('GET', '/v1/billing/balance')
    return Math.round(Number((answer.body as { balance: string }).balance) * 1_000_000)
  }

  it('runs a flow in the editor, then Runs lists its runs and both balances moved', async () => {
    const models = await sandbox.call('GET', '/v1/models?limit=500')
    const model = (models.body as { items: { id: string; slug: string }[] }).items.find(
      (m) => m.slug === 'atelier/text-to-image',
    )
    const node = (label: string, prompt: string) => ({
      id: randomUUID(),
      label,
      slug: label.toLowerCase(),
      type_code: 'model',
      model_id: model?.id,
      config: {},
      inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: prompt }],
      outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
    })
    const file = join(home, 'kite-and-boat.flow.json')
    writeFileSync(
      file,
      JSON.stringify({
        id: randomUUID(),
        name: FLOW,
        inputs: [],
        outputs: [],
        nodes: [node('Kite', 'a red kite'), node('Boat', 'a blue boat')],
      }),
    )

    const sidebar = page.getByTestId('balance')
    const before = await serviceBalance()
    await expect.poll(() => sidebar.textContent(), WAIT).toBe(credits(before))

    const nav = page.getByRole('navigation', { name: 'Sections' })
    await nav.getByRole('button', { name: 'Flows' }).click()
    await page.getByTestId('import-file').setInputFiles(file)
    await page.getByTestId('flow-canvas').waitFor()
    // The editor's balance is the sidebar's: one number.
    await expect
      .poll(() => page.getByTestId('estimate').textContent(), WAIT)
      .toContain(` · balance ${credits(before)}`)

    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)

    const after = await serviceBalance()
    expect(after).toBeLessThan(before)
    await expect.poll(() => sidebar.textContent(), WAIT).toBe(credits(after))
    await expect
      .poll(() => page.getByTestId('estimate').textContent(), WAIT)
      .toContain(` · balance ${credits(after)}`)

    await nav.getByRole('button', { name: 'Runs' }).click()
    const runs = await sandbox.call('GET', '/v1/runs?limit=100')
    const ids = (runs.body as { items: { id: string }[] }).items.map((r) => r.id).sort()
    expect(ids).toHaveLength(2)
    const listed = async () => {
      const rows = await page.locator('[data-run-id]').all()
      const found = await Promise.all(rows.map((row) => row.getAttribute('data-run-id')))
      return found.sort()
    }
    await expect.poll(listed, WAIT).toEqual(ids)
    for (const id of ids) {
      expect(await page.locator(`[data-run-id="${id}"]`).textContent()).toContain('Succeeded')
    }
    await expect.poll(() => page.getByText('2 runs').count(), WAIT).toBeGreaterThan(0)

    // Nothing of this came from a sync: none ran.
    expect(core.syncStatus().last).toBeNull()
    expect(errors).toEqual([])
  })
})
