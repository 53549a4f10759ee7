import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AtelierApi } from '../../src-shared/ipc'
import { seedHistory } from '../../src-main/sandbox/runs'
import { sandboxBackend } from '../../src-main/workspace'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * "Use in a flow" from an asset's details, in Chromium against the sandbox: the editor opens on
 * a new flow with an Image node holding the asset; with a flow open, the person is asked where
 * it goes. The saved flow is read back through the app's own bridge.
 */

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')
const WAIT = { timeout: 20_000, interval: 100 }

/** What the test reads of a saved node (the flow file is plain JSON to the bridge). */
interface SavedNode {
  type_code: string
  builtin_node_code: string | null
  inputs?: { name: string; value: unknown }[]
}

describe.runIf(available)('using an asset in a flow, in Chromium', () => {
  let app: App<TestSandbox>
  let page: Page
  let errors: string[]

  beforeAll(async () => {
    app = await startApp({
      name: 'asset-use-in-flow',
      service: async () => {
        const sandbox = await startTestSandbox({ latencyMs: 0 })
        // Assets before the first sync, so they are in the local copy when the page opens.
        await seedHistory(sandbox.services, sandbox.orgId, 60)
        return sandbox
      },
      stopService: (sandbox) => sandbox.close(),
    })
    app.openCore(sandboxBackend(app.service))
    ;({ page, errors } = await app.openPage({ viewport: { width: 1440, height: 900 } }))
    page.setDefaultTimeout(10_000)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  /** The first image's details, opened from the Assets section. */
  async function openFirstImage(): Promise<{ id: string; name: string }> {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button', { name: 'Assets' })
      .click()
    const grid = page.getByRole('grid', { name: 'Assets' })
    await expect.poll(() => grid.getByRole('gridcell').count(), WAIT).toBeGreaterThan(0)
    const asset = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      const listed = await atelier.assets.list({ mediaType: 'image', limit: 1 })
      const first = listed.ok ? listed.value.items[0] : undefined
      return first ? { id: first.id, name: first.name } : null
    })
    if (!asset) throw new Error('the seed has no image asset')
    await grid.getByRole('gridcell', { name: asset.name }).first().click()
    await page.getByRole('complementary', { name: `Asset ${asset.name}` }).waitFor()
    return asset
  }

  async function savedNodes(flowName: string): Promise<SavedNode[]> {
    return page.evaluate(async (name) => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      const listed = await atelier.flows.list()
      const summary = listed.ok ? listed.value.find((flow) => flow.name === name) : undefined
      if (!summary) return []
      const opened = await atelier.flows.get({ id: summary.id })
      return opened.ok ? ((opened.value.flow.nodes ?? []) as SavedNode[]) : []
    }, flowName)
  }

  it('opens the editor on a new flow with an Image node holding the asset', async () => {
    const asset = await openFirstImage()
    await page.getByRole('button', { name: 'Use in a flow' }).click()
    const node = page.getByTestId(`node-${asset.name}`)
    await node.waitFor({ timeout: WAIT.timeout })
    const flowName = `Flow with ${asset.name.replace(/\.[^.]+$/, '')}`
    await expect.poll(() => page.locator('.flow-title').textContent(), WAIT).toContain(flowName)
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')
    const nodes = await savedNodes(flowName)
    expect(nodes).toHaveLength(1)
    expect(nodes[0]).toMatchObject({ type_code: 'builtin', builtin_node_code: 'image' })
    expect(nodes[0]?.inputs?.find((input) => input.name === 'value')?.value).toBe(asset.id)
    // In view: the node lies inside the canvas.
    const canvas = await page.getByTestId('flow-canvas').boundingBox()
    const box = await node.boundingBox()
    expect(canvas && box).toBeTruthy()
    if (canvas && box) {
      expect(box.x).toBeGreaterThanOrEqual(canvas.x)
      expect(box.y).toBeGreaterThanOrEqual(canvas.y)
      expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width)
      expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height)
    }
  })

  it('with a flow open, asks where it goes, and adds it to the open flow', async () => {
    const asset = await openFirstImage()
    const flowName = `Flow with ${asset.name.replace(/\.[^.]+$/, '')}`
    await page.getByRole('button', { name: 'Use in a flow' }).click()
    const dialog = page.getByRole('dialog', { name: 'Use in a flow' })
    expect(await dialog.textContent()).toContain(`The flow “${flowName}” is open in the editor.`)
    await dialog.getByRole('button', { name: 'Add to the open flow' }).click()
    await expect.poll(() => page.locator('.react-flow__node-flowNode').count(), WAIT).toBe(2)
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')
    const nodes = await savedNodes(flowName)
    expect(nodes.map((node) => node.inputs?.find((i) => i.name === 'value')?.value)).toEqual([
      asset.id,
      asset.id,
    ])
    expect(errors).toEqual([])
  })

  it('keeps the save state readable and the toolbar on one line at 1440×900 and 1280×800', async () => {
    mkdirSync(artifacts, { recursive: true })
    for (const [width, height] of [
      [1440, 900],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height })
      const state = page.getByTestId('save-state')
      await expect.poll(() => state.textContent(), WAIT).toBe('Saved')
      const fits = await state.evaluate((element) => {
        // The page's own element; this file is type-checked without the DOM's types.
        const box = element as unknown as { scrollWidth: number; clientWidth: number }
        return box.scrollWidth <= box.clientWidth
      })
      expect(fits, `the save state is cut at ${width} px`).toBe(true)
      const toolbar = page.getByRole('toolbar', { name: 'Flow editor' })
      // One line: every item of the toolbar starts on the same row.
      const tops: number[] = []
      for (const item of await toolbar.locator(':scope > *').all()) {
        const box = await item.boundingBox()
        if (box && box.width > 0) tops.push(Math.round(box.y))
      }
      expect(
        Math.max(...tops) - Math.min(...tops),
        `the toolbar wraps at ${width} px`,
      ).toBeLessThan(12)
      await page.screenshot({ path: join(artifacts, `editor-toolbar-${width}.png`) })
    }
  })
})
