import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSandboxApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import type { TestSandbox } from '../helpers/sandbox'
import { inside, overlap, type Box } from '../helpers/boxes'

/**
 * The canvas tells the truth, in Chromium against the sandbox: a result made with other settings
 * says "Out of date" (and is current again after undo), nodes added by a click land in view,
 * fit view keeps nodes readable, previews do not grow nodes over each other, the minimap stays
 * in its frame, and the toolbar keeps one height through a run. Numbers read from the page, and
 * screenshots at 1440×900 and 1280×800 for a person to look at.
 */

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')

const TEXT = 'Text'
const IMAGE = 'Atelier Text to Image'
/** How long the sandbox holds the image's dispatch once, so the toolbar is seen mid-run. */
const HELD_MS = 3000
const WAIT = { timeout: 15_000, interval: 50 }

describe.runIf(available)('the canvas in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let page: Page
  let errors: string[] = []

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    ;({ app, sandbox, page, errors } = await startSandboxApp('canvas', {
      sandbox: { latencyMs: 20 },
      page: { viewport: { width: 1440, height: 900 } },
    }))
    page.setDefaultTimeout(8000)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  const node = (label: string) => page.getByTestId(`node-${label}`)
  const badge = (label: string) => node(label).getByTestId('node-state')
  const inspectorInput = (name: string) =>
    page.getByTestId('node-inspector').getByTestId(`input-${name}`)
  const boxOf = async (target: Locator): Promise<Box> => {
    const box = await target.boundingBox()
    if (!box) throw new Error('not on screen')
    return box
  }
  const nodeBoxes = async () =>
    Promise.all((await page.locator('.react-flow__node-flowNode').all()).map(boxOf))
  const canvasBox = () => boxOf(page.getByTestId('flow-canvas'))
  const toolbarHeight = () =>
    page.evaluate<number>(
      `document.querySelector('[role="toolbar"][aria-label="Flow editor"]').getBoundingClientRect().height`,
    )
  /** Whether every item of the toolbar sits on its one line. */
  const toolbarOnOneLine = () =>
    page.evaluate<boolean>(`(() => {
      const bar = document.querySelector('[role="toolbar"][aria-label="Flow editor"]')
      const outer = bar.getBoundingClientRect()
      return [...bar.children].every((child) => {
        const box = child.getBoundingClientRect()
        return box.height === 0 || (box.top >= outer.top - 1 && box.bottom <= outer.bottom + 1)
      })
    })()`)
  const zoom = () =>
    page.evaluate<number>(
      `new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a`,
    )
  const select = async (label: string) => {
    await node(label).locator('.flow-node-head').click()
    await expect
      .poll(() => page.getByTestId('node-inspector').getAttribute('aria-label'), WAIT)
      .toBe(`Node ${label}`)
  }
  const center = async (target: Locator) => {
    const box = await boxOf(target)
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 }
  }
  const addByClick = async (name: string) => {
    const search = page.getByPlaceholder('Search nodes…')
    await search.fill(name)
    await page.getByTestId(`palette-item-${name}`).click()
    await search.fill('')
  }
  const noOverlaps = async () => {
    const boxes = await nodeBoxes()
    return boxes.every((a, i) => boxes.every((b, j) => i === j || !overlap(a, b)))
  }
  const fitView = async () => {
    await page.getByRole('button', { name: 'Fit View' }).click()
    // Fit view animates nothing here, but React Flow applies it on the next frame.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => resolve(null)))')
  }

  it('shows no minimap on an empty canvas, and adds clicked nodes where the canvas looks', async () => {
    await page.getByRole('textbox', { name: 'New flow name' }).fill('Canvas truths')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByTestId(`palette-item-${TEXT}`).waitFor()
    expect(await page.locator('.flow-minimap').count()).toBe(0)

    await addByClick(TEXT)
    await node(TEXT).waitFor()
    await addByClick(IMAGE)
    await node(IMAGE).waitFor()
    const canvas = await canvasBox()
    const inspector = await boxOf(page.locator('.flow-inspector'))
    for (const box of await nodeBoxes()) {
      expect(inside(box, canvas)).toBe(true)
      expect(overlap(box, inspector)).toBe(false)
    }
    expect(await noOverlaps()).toBe(true)

    // The minimap now draws the flow, within its own frame.
    const minimap = await boxOf(page.locator('.flow-minimap'))
    const drawn = await boxOf(page.locator('.flow-minimap svg'))
    expect(inside(drawn, minimap)).toBe(true)
    expect(inside(minimap, canvas)).toBe(true)
    expect(
      await page.evaluate<string>(
        `getComputedStyle(document.querySelector('.flow-minimap svg')).overflow`,
      ),
    ).toBe('hidden')
  }, 60_000)

  it('fits a small flow without blowing it up past the canvas', async () => {
    await fitView()
    const fitted = await zoom()
    expect(fitted).toBeLessThanOrEqual(1.25)
    expect(fitted).toBeGreaterThanOrEqual(0.6)
    const canvas = await canvasBox()
    for (const box of await nodeBoxes()) expect(inside(box, canvas)).toBe(true)
  })

  it('keeps the toolbar one line of one height before, during and after a run', async () => {
    // Text into the prompt, a small picture.
    const from = await center(node(TEXT).getByTestId('port-out-text'))
    const to = await center(node(IMAGE).getByTestId('port-in-prompt'))
    await page.mouse.move(from.x, from.y)
    await page.mouse.down()
    await page.mouse.move(to.x, to.y, { steps: 12 })
    await page.mouse.up()
    await expect.poll(() => page.locator('.react-flow__edge').count(), WAIT).toBe(1)
    await select(TEXT)
    await inspectorInput('value').getByRole('textbox').fill('a lighthouse in fog')
    await select(IMAGE)
    await inspectorInput('width').getByRole('spinbutton').fill('64')
    await inspectorInput('height').getByRole('spinbutton').fill('64')
    await page.getByTestId('auto-layout').click()
    await expect
      .poll(() => page.getByTestId('check-summary').textContent(), WAIT)
      .toBe('No problems')
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')

    const before = await toolbarHeight()
    expect(await toolbarOnOneLine()).toBe(true)
    const held = await sandbox.call('PUT', '/_sandbox/faults', {
      body: {
        rules: [
          {
            method: 'POST',
            pathPrefix: '/v1/models/atelier/text-to-image',
            latencyMs: HELD_MS,
            times: 1,
          },
        ],
      },
    })
    expect(held.status).toBe(200)
    try {
      await page.getByTestId('run-button').click()
      await page.getByTestId('cancel-button').waitFor()
      expect(await toolbarHeight()).toBe(before)
      expect(await toolbarOnOneLine()).toBe(true)
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)
    expect(await toolbarHeight()).toBe(before)
    expect(await toolbarOnOneLine()).toBe(true)

    // The image's preview grew its node: laid out with room for it, nothing overlaps.
    await node(IMAGE).locator('img.flow-node-preview').waitFor()
    expect(await noOverlaps()).toBe(true)
    await page.getByTestId('auto-layout').click()
    expect(await noOverlaps()).toBe(true)
    await page.screenshot({ path: join(artifacts, 'canvas-after-run-1440.png') })
  }, 60_000)

  it('marks a result out of date after an edit, and current again after undo', async () => {
    await expect.poll(() => badge(IMAGE).textContent(), WAIT).toBe('Done')
    await select(IMAGE)
    await inspectorInput('width').getByRole('spinbutton').fill('96')
    await expect.poll(() => badge(IMAGE).textContent(), WAIT).toBe('Out of date')
    // Upstream of the edit, the text is still what the flow makes.
    expect(await badge(TEXT).textContent()).toBe('Done')
    expect(await page.getByTestId('inspector-state').textContent()).toBe('Out of date')
    await page.screenshot({ path: join(artifacts, 'canvas-out-of-date-1440.png') })

    await page.getByTestId('undo-button').click()
    await expect.poll(() => badge(IMAGE).textContent(), WAIT).toBe('Done')
    expect(await page.getByTestId('inspector-state').textContent()).toBe('Done')

    // Run again with the settings that made it: the run reuses it, and says so.
    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)
    expect(await badge(IMAGE).textContent()).toBe('Cached')
  }, 60_000)

  it('fits five nodes no further out than readable, at 1440×900 and 1280×800', async () => {
    for (let n = 0; n < 3; n++) await addByClick(TEXT)
    await expect.poll(() => page.locator('.react-flow__node-flowNode').count(), WAIT).toBe(5)
    for (const [width, height] of [
      [1440, 900],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height })
      await page.getByTestId('auto-layout').click()
      expect(await noOverlaps()).toBe(true)
      await fitView()
      const fitted = await zoom()
      expect(fitted).toBeGreaterThanOrEqual(0.6)
      expect(fitted).toBeLessThanOrEqual(1.25)
      expect(await toolbarOnOneLine()).toBe(true)
      await page.screenshot({ path: join(artifacts, `canvas-five-nodes-${width}.png`) })
    }
    await page.setViewportSize({ width: 1440, height: 900 })
    expect(errors).toEqual([])
  }, 60_000)
})
