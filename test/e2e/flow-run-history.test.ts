import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openCore, type Core } from '../../src-main/core'
import { openLogger, type Logger } from '../../src-main/log'
import { sandboxBackend } from '../../src-main/workspace'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import { bridgeToMainProcess } from '../helpers/page-bridge'
import { serveBuiltRenderer, type ServedRenderer } from '../helpers/renderer-build'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'
import { overlap, type Box } from '../helpers/boxes'

/**
 * After a run, the nodes its previews grew push aside the nodes they would cover (one undo step,
 * saved), at 1280×800 and 1440×900, and the minimap draws them at their new size inside its
 * frame. The flow's run history lists its runs; one the service's outage interrupted has a
 * Resume that finishes it without paying twice. Real core, real sandbox (stopped and started
 * again on the same port with the same data), real Chromium.
 */

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')
const FLOW = 'Room for previews'
const WAIT = { timeout: 15_000, interval: 50 }

describe.runIf(available)('room for previews, and the flow’s run history', () => {
  let browser: Browser
  let renderer: ServedRenderer
  let sandbox: TestSandbox
  let dataDir: string
  let port = 0
  let home: string
  let logger: Logger
  let core: Core
  let page: Page
  let pictureId = ''
  const messages: FlowRunEventMessage[] = []
  const errors: string[] = []

  const startSandboxHere = () =>
    startTestSandbox({ latencyMs: 20, dataDir, ...(port ? { port } : {}) })

  /** Text → text-to-image, and a note at `noteY` below the picture's top. */
  function flowFile(name: string, modelId: string, noteY: number): Record<string, unknown> {
    const text = randomUUID()
    pictureId = randomUUID()
    const textOut = randomUUID()
    const builtin = (id: string, label: string, x: number, y: number, value: string) => ({
      id,
      label,
      type_code: 'builtin',
      builtin_node_code: 'text',
      x,
      y,
      config: {},
      inputs: [{ id: randomUUID(), name: 'value', variable_type_code: 'text', value }],
      outputs: [
        { id: id === text ? textOut : randomUUID(), name: 'text', variable_type_code: 'text' },
      ],
    })
    return {
      id: randomUUID(),
      name,
      inputs: [],
      outputs: [],
      nodes: [
        builtin(text, 'Prompt', 0, 0, 'a lighthouse in the fog'),
        {
          id: pictureId,
          label: 'Picture',
          type_code: 'model',
          model_id: modelId,
          builtin_node_code: null,
          x: 320,
          y: 0,
          config: {},
          inputs: [
            {
              id: randomUUID(),
              name: 'prompt',
              variable_type_code: 'text',
              value: null,
              source_output_id: textOut,
            },
            { id: randomUUID(), name: 'width', variable_type_code: 'integer', value: 64 },
            { id: randomUUID(), name: 'height', variable_type_code: 'integer', value: 64 },
            { id: randomUUID(), name: 'seed', variable_type_code: 'integer', value: 7 },
          ],
          outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
        },
        builtin(randomUUID(), 'Note', 320, noteY, 'kept below the picture'),
      ],
    }
  }

  const node = (label: string) => page.getByTestId(`node-${label}`)
  const frame = (label: string) => page.locator('.react-flow__node').filter({ has: node(label) })
  const boxOf = async (label: string): Promise<Box> => {
    const box = await frame(label).boundingBox()
    if (!box) throw new Error(`${label} is not on screen`)
    return box
  }
  /** Pairs of nodes whose boxes on the screen overlap. */
  const overlaps = async (): Promise<string[]> => {
    const labels = ['Prompt', 'Picture', 'Note']
    const boxes = await Promise.all(labels.map(boxOf))
    const found: string[] = []
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i], boxes[j]]
        if (a && b && overlap(a, b)) found.push(`${String(labels[i])} × ${String(labels[j])}`)
      }
    }
    return found
  }
  const zoom = () =>
    page.evaluate<number>(
      `new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a`,
    )
  const remoteRunCount = async () => {
    const answer = await sandbox.call('GET', '/v1/runs?limit=500')
    expect(answer.status).toBe(200)
    return (answer.body as { items: unknown[] }).items.length
  }
  const saved = () =>
    expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    dataDir = mkdtempSync(join(tmpdir(), 'atelier-e2e-history-sandbox-'))
    home = mkdtempSync(join(tmpdir(), 'atelier-e2e-history-'))
    ;[renderer, browser, sandbox] = await Promise.all([
      serveBuiltRenderer(),
      launchChromium(),
      startSandboxHere(),
    ])
    port = Number(new URL(sandbox.url).port)
    logger = openLogger({ home })
    // The backend outlives each sandbox: its url and keys stay the same across restarts.
    const backend = { ...sandboxBackend(sandbox), close: async () => {} }
    core = openCore({ home, logger, backend })
    core.onEvent((name, payload) => {
      if (name === 'flowRuns.event') messages.push(payload as FlowRunEventMessage)
    })
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } })
    page.setDefaultTimeout(8000)
    page.on('pageerror', (error) => errors.push(error.message))
    await bridgeToMainProcess(page, () => backend.info, { core })
    await page.goto(renderer.url)
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('status')
      .filter({ hasText: 'Synced just now' })
      .waitFor({ timeout: 60_000 })
  }, 120_000)

  afterAll(async () => {
    await page.close()
    await core.close()
    logger.close()
    await browser.close()
    await renderer.close()
    await sandbox.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('pushes the node below a grown preview out of its way, as one undo step', async () => {
    const model = core.databases.mirror.models.withSlug(
      { orgId: sandbox.orgId },
      'atelier/text-to-image',
    )
    if (!model) throw new Error('The mirror has no atelier/text-to-image.')
    // The picture's height before a run, in flow units, from a first copy of the flow…
    const importFlow = async (name: string, noteY: number) => {
      const file = join(home, `${name}.flow.json`)
      writeFileSync(file, JSON.stringify(flowFile(name, model.id, noteY)))
      await page.getByTestId('import-file').setInputFiles(file)
      for (const label of ['Prompt', 'Picture', 'Note']) await node(label).waitFor()
    }
    await importFlow('Measuring', 900)
    await expect
      .poll(() => page.getByTestId('check-summary').textContent(), WAIT)
      .toBe('No problems')
    const before = await page.evaluate<number>(
      `document.querySelector('[data-id="${pictureId}"].react-flow__node').offsetHeight`,
    )
    expect(before).toBeGreaterThan(50)
    await page.getByRole('button', { name: '← Flows' }).click()
    // …so that in the flow run here the note starts 30 px below it, where its preview will grow.
    await importFlow(FLOW, before + 30)
    await expect
      .poll(() => page.getByTestId('check-summary').textContent(), WAIT)
      .toBe('No problems')
    const picture = await boxOf('Picture')
    const placed = await boxOf('Note')
    const scale = await zoom()
    expect(await overlaps()).toEqual([])

    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)
    await node('Picture').locator('img.flow-node-preview').waitFor()
    // The picture grew past the note's top: the note was pushed, not covered.
    await expect
      .poll(async () => (await boxOf('Picture')).height, WAIT)
      .toBeGreaterThan(placed.y - picture.y)
    await expect.poll(overlaps, WAIT).toEqual([])
    const grown = await boxOf('Picture')
    const pushed = await boxOf('Note')
    expect(pushed.x).toBeCloseTo(placed.x, 0)
    // Just past the picture's bottom (24 flow units), not further.
    expect(Math.abs(pushed.y - (grown.y + grown.height) - 24 * scale)).toBeLessThan(1.5)
    await saved()

    // One undo step puts the note back where it was put; redo makes room again.
    await page.getByTestId('undo-button').click()
    await expect
      .poll(async () => Math.round((await boxOf('Note')).y), WAIT)
      .toBe(Math.round(placed.y))
    await page.getByTestId('redo-button').click()
    await expect.poll(overlaps, WAIT).toEqual([])
    await saved()

    // The minimap draws the picture at its grown size, and nothing outside its frame.
    const measuredHeight = await page.evaluate<number>(
      `document.querySelector('[data-id="${pictureId}"].react-flow__node').offsetHeight`,
    )
    const minimapPath = page.locator('.flow-minimap path.react-flow__minimap-node')
    await expect
      .poll(() => minimapPath.getAttribute('d'), WAIT)
      .toContain(`v${String(measuredHeight)}`)
    const inside = await page.evaluate(`(() => {
      const svg = document.querySelector('.flow-minimap svg').getBoundingClientRect()
      const drawn = document.querySelector('.flow-minimap path.react-flow__minimap-node').getBoundingClientRect()
      return drawn.left >= svg.left - 0.5 && drawn.top >= svg.top - 0.5 &&
        drawn.right <= svg.right + 0.5 && drawn.bottom <= svg.bottom + 0.5
    })()`)
    expect(inside).toBe(true)

    for (const [width, height] of [
      [1280, 800],
      [1440, 900],
    ] as const) {
      await page.setViewportSize({ width, height })
      await page.getByRole('button', { name: 'Fit View' }).click()
      await expect.poll(overlaps, WAIT).toEqual([])
      // The toolbar keeps to one line: the canvas does not jump when a run starts or ends.
      const toolbar = await page.getByRole('toolbar', { name: 'Flow editor' }).boundingBox()
      expect(toolbar?.height).toBeLessThan(60)
      await page.screenshot({
        path: join(artifacts, `flow-room-for-previews-${String(width)}x${String(height)}.png`),
      })
    }
    expect(errors).toEqual([])
  }, 90_000)

  it('lists the flow’s runs, and Resume finishes one the outage interrupted', async () => {
    const panel = page.getByRole('region', { name: 'Runs of this flow' })
    const rows = panel.getByTestId('flow-run')
    await page.getByTestId('flow-runs').locator('summary').click()
    await expect.poll(() => rows.count(), WAIT).toBe(1)
    expect(await rows.first().getByTestId('flow-run-state').textContent()).toBe('Succeeded')
    expect(await rows.first().getByTestId('flow-run-details').textContent()).toMatch(
      /^3 nodes done · took \d+ s · 0\.\d{4} credits$/,
    )
    expect(await rows.first().getByTestId('flow-run-resume').count()).toBe(0)
    await rows.first().getByTestId('flow-run-show').waitFor()
    // Closed again with Escape, and the keys go back to its button.
    await rows.first().getByTestId('flow-run-show').focus()
    await page.keyboard.press('Escape')
    await expect.poll(() => panel.isVisible(), WAIT).toBe(false)
    expect(
      await page.evaluate<boolean>(`document.activeElement?.textContent?.trim() === 'Runs'`),
    ).toBe(true)

    // The toolbar clips what overflows it: its popovers are drawn on the window, whole and on
    // top (the Versions panel once opened inside the toolbar and could not be seen at all).
    const versions = page.locator('details.versions:not(.flow-runs)')
    await versions.locator('summary').click()
    const versionsPanel = versions.locator('.versions-panel')
    await versionsPanel.waitFor()
    const box = await versionsPanel.boundingBox()
    expect(box?.height).toBeGreaterThan(40)
    const onTop = await page.evaluate<boolean>(`(() => {
      const panel = document.querySelector('details.versions:not(.flow-runs) .versions-panel')
      const rect = panel.getBoundingClientRect()
      const probes = [
        [rect.left + 8, rect.top + 8],
        [rect.left + rect.width / 2, rect.top + rect.height / 2],
        [rect.right - 8, rect.bottom - 8],
      ]
      return probes.every(([x, y]) => panel.contains(document.elementFromPoint(x, y)))
    })()`)
    expect(onTop).toBe(true)
    await versions.locator('summary').click()

    // A wider picture, not made yet, run while the service is gone: the run is interrupted,
    // outside the window's knowledge (as after a restart), so only the history offers Resume.
    await node('Picture').locator('.flow-node-head').click()
    await page
      .getByTestId('node-inspector')
      .getByTestId('input-width')
      .getByRole('spinbutton')
      .fill('96')
    await saved()
    const listed = core.flows.list()
    const summary = (await listed).find((flow) => flow.name === FLOW)
    if (!summary) throw new Error(`No flow ${FLOW}.`)
    const stored = await core.flows.get({ id: summary.id })
    const before = await remoteRunCount()
    await sandbox.close()
    const { flowRunId } = await core.flows.startRun({
      flow: stored.flow,
      inputs: {},
      force: [],
    })
    await expect
      .poll(
        () => messages.some((m) => m.flowRunId === flowRunId && m.event.type === 'flow-finished'),
        WAIT,
      )
      .toBe(true)
    sandbox = await startSandboxHere()
    await expect
      .poll(() => core.syncStatus().state, { timeout: 20_000, interval: 100 })
      .not.toBe('offline')

    await page.getByTestId('flow-runs').locator('summary').press('Enter')
    await expect.poll(() => rows.count(), WAIT).toBe(2)
    const newest = rows.first()
    expect(await newest.getByTestId('flow-run-state').textContent()).toBe('Interrupted')
    expect(await newest.getByTestId('flow-run-details').textContent()).toMatch(
      /^2 nodes cached · 1 failed · took \d+ s · nothing charged$/,
    )
    expect(await rows.nth(1).getByTestId('flow-run-state').textContent()).toBe('Succeeded')
    await page.screenshot({ path: join(artifacts, 'flow-run-history-interrupted.png') })

    // Clicked as a person does: it must be on top, not clipped by the toolbar.
    await newest.getByTestId('flow-run-resume').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), { ...WAIT, timeout: 30_000 })
      .toMatch(/^Run succeeded/)
    // The history read again when the run ended: the same run, now finished.
    await expect
      .poll(() => newest.getByTestId('flow-run-state').textContent(), WAIT)
      .toBe('Succeeded')
    expect(await rows.count()).toBe(2)
    expect(await newest.getByTestId('flow-run-resume').count()).toBe(0)
    // Sent once in all: the outage made no second remote run.
    expect(await remoteRunCount()).toBe(before + 1)
    expect(errors).toEqual([])
  }, 90_000)
})
