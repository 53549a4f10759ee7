import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSandboxApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import type { TestSandbox } from '../helpers/sandbox'

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')

const FLOW = 'Poppy poster'
const TEXT = 'Text'
const IMAGE = 'Atelier Text to Image'
const UPSCALE = 'Atelier Upscale'
const PROMPT = 'a red poppy field at dawn'
/** How long the sandbox holds the upscale's dispatch once, so the run is seen midway. */
const HELD_MS = 8000
const WAIT = { timeout: 15_000, interval: 50 }

interface SandboxRun {
  id: string
  model_id: string
  input: Record<string, unknown>
}

interface FlowFile {
  name: string
  context_variables?: Record<string, unknown>
  nodes: {
    id: string
    label: string
    inputs?: {
      name: string
      source_output_id?: string | null
      retry_source_output_id?: string | null
    }[]
    outputs?: { id: string }[]
  }[]
}

interface Graph {
  nodes: string[]
  edges: string[]
}

/** The graph a flow file describes, named as the canvas names it. */
function graphOfFile(file: FlowFile): Graph {
  const ownerOf = new Map(
    file.nodes.flatMap((n) => (n.outputs ?? []).map((output) => [output.id, n.id] as const)),
  )
  const edges = file.nodes.flatMap((n) =>
    (n.inputs ?? []).flatMap((input) => {
      const source = input.source_output_id ? ownerOf.get(input.source_output_id) : undefined
      return source ? [`Edge from ${source} to ${n.id}`] : []
    }),
  )
  return { nodes: file.nodes.map((n) => n.id).sort(), edges: edges.sort() }
}

describe.runIf(available)('the flow editor in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let home: string
  let page: Page
  let errors: string[] = []
  /** What the page logged as errors, for the message of a preview that did not load. */
  let consoleErrors: string[] = []

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    // The page opens once the first sync is done: the palette offers what it mirrored.
    ;({ app, sandbox, page, errors, consoleErrors } = await startSandboxApp('flows', {
      sandbox: { latencyMs: 20 },
      page: { viewport: { width: 1440, height: 900 }, acceptDownloads: true },
    }))
    home = app.home
    page.setDefaultTimeout(8000)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  const node = (label: string) => page.getByTestId(`node-${label}`)
  const stateOf = (label: string) =>
    node(label).getByTestId('node-state').getAttribute('data-state', { timeout: 1000 })
  const edgeCount = () => page.locator('.react-flow__edge').count()
  const inspectorInput = (name: string) =>
    page.getByTestId('node-inspector').getByTestId(`input-${name}`)

  const select = async (label: string) => {
    await node(label).locator('.flow-node-head').click()
    await expect
      .poll(() => page.getByTestId('node-inspector').getAttribute('aria-label'), WAIT)
      .toBe(`Node ${label}`)
  }

  /** The canvas's zoom, from the viewport's transform. */
  const zoom = () =>
    page.evaluate<number>(
      `new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a`,
    )

  /** Where a node (by label) or a frame is on the screen: its top left corner. */
  const corner = async (what: string | Locator) => {
    const target =
      typeof what === 'string'
        ? page.locator('.react-flow__node').filter({ has: node(what) })
        : what
    const box = await target.boundingBox()
    if (!box) throw new Error('not on screen')
    return { x: Math.round(box.x), y: Math.round(box.y) }
  }

  const center = async (target: Locator) => {
    const box = await target.boundingBox()
    if (!box) throw new Error('not on screen')
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 }
  }

  /** Draws a connection with the mouse, as a person does; `midway` looks before the release. */
  const drawConnection = async (from: Locator, to: Locator, midway?: () => Promise<void>) => {
    const start = await center(from)
    const end = await center(to)
    await page.mouse.move(start.x, start.y)
    await page.mouse.down()
    await page.mouse.move(end.x, end.y, { steps: 12 })
    await midway?.()
    await page.mouse.up()
  }

  const switchTheme = async (theme: 'Light' | 'Dark') => {
    const nav = page.getByRole('navigation', { name: 'Sections' })
    await nav.getByRole('button', { name: 'Settings' }).click()
    await page.getByText(theme, { exact: true }).click()
    await expect
      .poll(() => page.locator('html').getAttribute('data-theme'), WAIT)
      .toBe(theme.toLowerCase())
    await nav.getByRole('button', { name: 'Flows' }).click()
  }

  /** `<name>-light.png` and `<name>-dark.png`, each after `ready` holds, switched as a user does. */
  const screenshots = async (name: string, ready: () => Promise<void>) => {
    for (const theme of ['Light', 'Dark'] as const) {
      await switchTheme(theme)
      await ready()
      await page.screenshot({ path: join(artifacts, `${name}-${theme.toLowerCase()}.png`) })
    }
    await switchTheme('Light')
  }

  /** What the page said about images it would not load, once each. */
  const blocked = () =>
    [...new Set(consoleErrors.filter((message) => message.includes('image')))].join('\n')

  /** The natural width of a node's preview once it has loaded (0: broken, -1: still loading). */
  const loadedWidth = (label: string) =>
    page.evaluate(`(() => {
      const img = document.querySelector('[data-testid="node-${label}"] img.flow-node-preview')
      return img && img.complete ? img.naturalWidth : -1
    })()`)

  /** The nodes (ids) and edges (as React Flow names them) on the canvas, sorted. */
  const graphOnCanvas = async (): Promise<Graph> => {
    const read = async (selector: string, attribute: string) => {
      const found = await page.locator(selector).all()
      const values = await Promise.all(found.map((element) => element.getAttribute(attribute)))
      return values.map((value) => value ?? '').sort()
    }
    return {
      nodes: await read('.react-flow__node-flowNode', 'data-id'),
      edges: await read('.react-flow__edge', 'aria-label'),
    }
  }

  const sandboxRuns = async (): Promise<SandboxRun[]> => {
    const answer = await sandbox.call('GET', '/v1/runs?limit=100')
    expect(answer.status).toBe(200)
    return (answer.body as { items: SandboxRun[] }).items
  }

  it('builds text → image → upscale by dragging from the palette and between ports', async () => {
    await page.getByRole('textbox', { name: 'New flow name' }).fill(FLOW)
    await page.getByRole('button', { name: 'Create' }).click()
    const canvas = page.getByTestId('flow-canvas')
    await screenshots('canvas-empty', async () => {
      await canvas.waitFor()
      await page.getByTestId(`palette-item-${TEXT}`).waitFor()
      expect(await page.locator('.react-flow__node').count()).toBe(0)
    })

    const search = page.getByPlaceholder('Search nodes…')
    const drop = async (name: string, x: number, y: number) => {
      await search.fill(name)
      await page.getByTestId(`palette-item-${name}`).dragTo(canvas, { targetPosition: { x, y } })
      await node(name).waitFor()
    }
    await drop(TEXT, 60, 60)
    // The first node on an empty canvas keeps the zoom it was dropped at (it was fitted to the
    // canvas, blown up to twice its size).
    expect(await zoom()).toBe(1)
    await drop(IMAGE, 300, 40)
    await drop(UPSCALE, 520, 60)
    await search.fill('')
    expect(await page.locator('.react-flow__node').count()).toBe(3)
    await page.getByTestId('auto-layout').click()
    await page.getByRole('button', { name: 'Fit View' }).click()

    // Text into the prompt.
    await drawConnection(
      node(TEXT).getByTestId('port-out-text'),
      node(IMAGE).getByTestId('port-in-prompt'),
    )
    await expect.poll(edgeCount, WAIT).toBe(1)

    // An image into a text input is refused while it is drawn, and nothing is added.
    await drawConnection(
      node(IMAGE).getByTestId('port-out-image'),
      node(TEXT).getByTestId('port-in-value'),
      async () => {
        await expect
          .poll(() => page.locator('.react-flow__connection.invalid').count(), WAIT)
          .toBe(1)
      },
    )
    expect(await edgeCount()).toBe(1)

    await drawConnection(
      node(IMAGE).getByTestId('port-out-image'),
      node(UPSCALE).getByTestId('port-in-image'),
      async () => {
        await expect.poll(() => page.locator('.react-flow__connection.valid').count(), WAIT).toBe(1)
      },
    )
    await expect.poll(edgeCount, WAIT).toBe(2)

    await select(TEXT)
    await inspectorInput('value').getByRole('textbox').fill(PROMPT)
    expect(await page.getByTestId('input-value').textContent()).not.toContain('From')
    await select(IMAGE)
    expect(await inspectorInput('prompt').textContent()).toContain(`From ${TEXT} · text`)
    await inspectorInput('width').getByRole('spinbutton').fill('64')
    await inspectorInput('height').getByRole('spinbutton').fill('64')
    // A seed starts on the dice (a new one each run): locked, it takes the value typed.
    await inspectorInput('seed')
      .getByRole('button', { name: /New each run/ })
      .click()
    await inspectorInput('seed').getByRole('spinbutton').fill('7')
    await select(UPSCALE)
    expect(await inspectorInput('image').textContent()).toContain(`From ${IMAGE} · image`)

    // Laid out again, now in the order the data flows.
    await page.getByTestId('auto-layout').click()
    await page.getByRole('button', { name: 'Fit View' }).click()
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')
    await expect
      .poll(() => page.getByTestId('check-summary').textContent(), WAIT)
      .toBe('No problems')
    expect(errors).toEqual([])
  }, 60_000)

  it('runs it on the sandbox: every node succeeds, with its cost and its image', async () => {
    await expect
      .poll(() => page.getByTestId('estimate').textContent(), WAIT)
      .toMatch(/^Estimate 0\.\d{4} credits/)
    expect(await node(IMAGE).getByTestId('node-estimate').textContent()).toMatch(/credits$/)

    const held = await sandbox.call('PUT', '/_sandbox/faults', {
      body: {
        rules: [
          {
            method: 'POST',
            pathPrefix: '/v1/models/atelier/upscale',
            latencyMs: HELD_MS,
            times: 1,
          },
        ],
      },
    })
    expect(held.status).toBe(200)
    try {
      await page.getByTestId('run-button').click()
      await screenshots('run-midway', async () => {
        await expect.poll(() => stateOf(UPSCALE), WAIT).toBe('running')
        expect(await stateOf(IMAGE)).toBe('succeeded')
        await node(UPSCALE).getByTestId('node-elapsed').waitFor()
      })
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }

    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded · 0\.\d{4} credits$/)
    for (const label of [TEXT, IMAGE, UPSCALE]) expect(await stateOf(label)).toBe('succeeded')
    for (const label of [IMAGE, UPSCALE]) {
      expect(await node(label).getByTestId('node-cost').textContent()).toMatch(/^0\.\d{4} credits$/)
    }
    await screenshots('run-finished', async () => {
      await expect.poll(() => stateOf(UPSCALE), WAIT).toBe('succeeded')
    })

    const runs = await sandboxRuns()
    expect(runs).toHaveLength(2)
    // What was typed into the inspector is what the model was asked for.
    const picture = runs.find((run) => run.input.prompt !== undefined)
    expect(picture?.input).toMatchObject({ prompt: PROMPT, width: 64, height: 64, seed: 7 })

    // A preview that loaded, not a broken image: it comes from the local media store as a data
    // URL (media.preview), which the window's CSP (`img-src 'self' data: blob:`, in the served
    // index.html here too) allows, where it would block the service's signed file URLs.
    for (const label of [IMAGE, UPSCALE]) {
      await node(label).locator('img.flow-node-preview').waitFor()
      await expect.poll(() => loadedWidth(label), WAIT).not.toBe(-1)
      expect(await loadedWidth(label), blocked()).toBeGreaterThan(0)
    }

    // The text node shows the words it gave; the image node's log lines are in its inspector,
    // the last one also on the node.
    expect(await node(TEXT).getByTestId('node-text').textContent()).toBe(PROMPT)
    const last = await node(IMAGE).getByTestId('node-log').textContent()
    await select(IMAGE)
    const lines = page.getByTestId('node-inspector').getByTestId('node-log-lines').locator('li')
    expect(await lines.count()).toBeGreaterThan(0)
    expect(await lines.last().textContent()).toContain(last)
  }, 60_000)

  it('re-runs only the edited node and what follows it; the rest comes from the cache', async () => {
    const before = await sandboxRuns()
    const estimate = await page.getByTestId('estimate').textContent()
    await select(UPSCALE)
    await inspectorInput('scale').getByRole('combobox').selectOption({ label: '4' })
    // Four times costs more: the check has seen the edit.
    await expect.poll(() => page.getByTestId('estimate').textContent(), WAIT).not.toBe(estimate)

    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)
    expect(await stateOf(TEXT)).toBe('cached')
    expect(await stateOf(IMAGE)).toBe('cached')
    expect(await stateOf(UPSCALE)).toBe('succeeded')

    const after = await sandboxRuns()
    const added = after.filter((run) => !before.some((old) => old.id === run.id))
    expect(added).toHaveLength(1)
    expect(added[0]?.input.scale).toBe(4)
  }, 30_000)

  it('undoes and redoes a move and a delete, with the buttons and the keys', async () => {
    const wrapper = page.locator('.react-flow__node').filter({ has: node(UPSCALE) })
    const where = () => wrapper.getAttribute('style')
    const start = await where()
    const head = await center(node(UPSCALE).locator('.flow-node-head'))
    await page.mouse.move(head.x, head.y)
    await page.mouse.down()
    await page.mouse.move(head.x + 60, head.y + 120, { steps: 10 })
    await page.mouse.up()
    const moved = await where()
    expect(moved).not.toBe(start)

    await page.getByTestId('undo-button').click()
    await expect.poll(where, WAIT).toBe(start)
    await page.getByTestId('redo-button').click()
    await expect.poll(where, WAIT).toBe(moved)
    await page.keyboard.press('Control+z')
    await expect.poll(where, WAIT).toBe(start)
    await page.keyboard.press('Control+Shift+z')
    await expect.poll(where, WAIT).toBe(moved)

    await select(UPSCALE)
    await page.keyboard.press('Delete')
    await expect.poll(() => node(UPSCALE).count(), WAIT).toBe(0)
    expect(await edgeCount()).toBe(1)
    await page.keyboard.press('Control+z')
    await expect.poll(() => node(UPSCALE).count(), WAIT).toBe(1)
    await expect.poll(edgeCount, WAIT).toBe(2)
    await page.getByTestId('redo-button').click()
    await expect.poll(() => node(UPSCALE).count(), WAIT).toBe(0)
    await page.getByTestId('undo-button').click()
    await expect.poll(() => node(UPSCALE).count(), WAIT).toBe(1)
    await expect.poll(edgeCount, WAIT).toBe(2)
  }, 30_000)

  it('groups two nodes, moves them by the group, undoes it, and a run ignores the group', async () => {
    await select(TEXT)
    await node(IMAGE)
      .locator('.flow-node-head')
      .click({ modifiers: ['Control'] })
    await expect
      .poll(() => page.getByRole('complementary').getByText('2 nodes selected.').count(), WAIT)
      .toBe(1)
    await page.keyboard.press('Control+g')
    const frame = page.getByTestId('group-Group')
    await frame.waitFor()
    expect(await frame.textContent()).toContain('2 nodes')

    const corners = async () => ({
      text: await corner(TEXT),
      image: await corner(IMAGE),
      upscale: await corner(UPSCALE),
      frame: await corner(frame),
    })
    const before = await corners()
    const head = await center(frame.locator('.group-frame-head'))
    await page.mouse.move(head.x, head.y)
    await page.mouse.down()
    await page.mouse.move(head.x + 45, head.y + 35, { steps: 6 })
    // Meanwhile the moved nodes' edges are drawn apart, React Flow's own are not.
    await expect.poll(() => page.locator('.moving-edges path').count(), WAIT).toBe(2)
    expect(await edgeCount()).toBe(0)
    await page.mouse.move(head.x + 90, head.y + 70, { steps: 6 })
    await page.mouse.up()
    await expect.poll(edgeCount, WAIT).toBe(2)
    expect(await page.locator('.moving-edges').count()).toBe(0)
    const after = await corners()
    // React Flow starts a drag at the first move past its threshold: the move so far is not
    // part of it. The group's nodes and its frame moved by as much, the other node not at all.
    const moved = { x: after.text.x - before.text.x, y: after.text.y - before.text.y }
    expect(moved.x).toBeGreaterThan(70)
    expect(moved.y).toBeGreaterThan(50)
    const shifted = (at: { x: number; y: number }) => ({ x: at.x + moved.x, y: at.y + moved.y })
    expect(after.image).toEqual(shifted(before.image))
    expect(after.frame).toEqual(shifted(before.frame))
    expect(after.upscale).toEqual(before.upscale)

    // One drag, one undo step; the frame follows its nodes.
    await page.keyboard.press('Control+z')
    await expect.poll(corners, WAIT).toEqual(before)
    await page.keyboard.press('Control+Shift+z')
    await expect.poll(corners, WAIT).toEqual(after)
    // Renamed from the inspector, once the frame is selected by its label bar.
    await frame.locator('.group-frame-head').click()
    const panel = page.getByTestId('group-inspector')
    await panel.getByRole('textbox', { name: 'Group label' }).fill('Prompt and picture')
    await page.getByTestId('group-Prompt and picture').waitFor()
    await screenshots('canvas-groups', async () => {
      await page.getByTestId('group-Prompt and picture').waitFor()
    })

    // Grouped and moved, nothing the nodes make changed: the run takes all three from the cache.
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')
    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-result').textContent(), WAIT)
      .toMatch(/^Run succeeded/)
    for (const label of [TEXT, IMAGE, UPSCALE]) expect(await stateOf(label)).toBe('cached')

    // Ungrouped by the keys, and back.
    await page.getByTestId('group-Prompt and picture').locator('.group-frame-head').click()
    await page.keyboard.press('Control+Shift+g')
    await expect.poll(() => page.locator('.group-frame').count(), WAIT).toBe(0)
    await page.keyboard.press('Control+z')
    await expect.poll(() => page.locator('.group-frame').count(), WAIT).toBe(1)
    expect(errors).toEqual([])
  }, 60_000)

  it('marks a disconnected required input before any run, and the run is refused', async () => {
    await select(UPSCALE)
    await inspectorInput('image').getByRole('button', { name: 'Disconnect' }).click()
    await expect.poll(edgeCount, WAIT).toBe(1)
    const port = node(UPSCALE).locator('.port.in.has-problem')
    await expect.poll(() => port.getByTestId('problem-marker').count(), WAIT).toBe(1)
    expect(await port.textContent()).toContain('Image')
    expect(
      await node(UPSCALE).locator('.flow-node-foot').getByTestId('problem-marker').count(),
    ).toBe(1)
    expect(await page.getByTestId('check-summary').textContent()).toMatch(/^\d+ problems?$/)
    await expect
      .poll(() => inspectorInput('image').getByTestId('problem-marker').count(), WAIT)
      .toBeGreaterThan(0)

    const runsBefore = (await sandboxRuns()).length
    await select(TEXT)
    await page.getByTestId('run-button').click()
    await expect
      .poll(() => page.getByTestId('run-problem').textContent(), WAIT)
      .toMatch(/cannot run/)
    expect((await sandboxRuns()).length).toBe(runsBefore)
    // The banner names the node and the input, and shows the node.
    const issue = page.getByTestId('run-issue').filter({ hasText: `${UPSCALE} · Image` })
    expect(await issue.count()).toBe(1)
    await issue.getByRole('button', { name: 'Show the node' }).click()
    await expect
      .poll(() => page.getByTestId('node-inspector').getAttribute('aria-label'), WAIT)
      .toBe(`Node ${UPSCALE}`)

    await page.keyboard.press('Control+z')
    await expect.poll(edgeCount, WAIT).toBe(2)
    await expect
      .poll(() => page.getByTestId('check-summary').textContent(), WAIT)
      .toBe('No problems')
    expect(await node(UPSCALE).getByTestId('problem-marker').count()).toBe(0)
  }, 30_000)

  it('exports the flow file and imports it back with the same nodes and edges', async () => {
    await expect.poll(() => page.getByTestId('save-state').textContent(), WAIT).toBe('Saved')
    const built = await graphOnCanvas()
    expect(built.nodes).toHaveLength(3)
    expect(built.edges).toHaveLength(2)
    await page.getByRole('button', { name: '← Flows' }).click()
    const row = page.getByTestId(`flow-row-${FLOW}`)
    await screenshots('flow-list', async () => {
      await row.waitFor()
      expect(await row.textContent()).toContain('3 nodes')
    })

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('button', { name: 'Export' }).click(),
    ])
    const saved = join(home, download.suggestedFilename())
    await download.saveAs(saved)
    const file = JSON.parse(readFileSync(saved, 'utf8')) as FlowFile
    expect(file.name).toBe(FLOW)
    expect(file.nodes.map((n) => n.label).sort()).toEqual([IMAGE, TEXT, UPSCALE].sort())
    expect(graphOfFile(file)).toEqual(built)
    // The group goes with the file, by its nodes' ids.
    const idOf = (label: string) => file.nodes.find((n) => n.label === label)?.id
    expect(file.context_variables?.atelier_groups).toEqual([
      {
        id: expect.any(String) as string,
        label: 'Prompt and picture',
        node_ids: [idOf(TEXT), idOf(IMAGE)],
      },
    ])

    await page.getByTestId('import-file').setInputFiles(saved)
    await page.getByTestId('flow-canvas').waitFor()
    for (const label of [TEXT, IMAGE, UPSCALE]) await node(label).waitFor()
    await expect.poll(edgeCount, WAIT).toBe(2)
    expect(await graphOnCanvas()).toEqual(built)
    expect(await page.getByTestId('group-Prompt and picture').textContent()).toContain('2 nodes')
    await select(IMAGE)
    expect(await inspectorInput('prompt').textContent()).toContain(`From ${TEXT} · text`)
    expect(await inspectorInput('width').getByRole('spinbutton').inputValue()).toBe('64')
    await select(UPSCALE)
    expect(await inspectorInput('image').textContent()).toContain(`From ${IMAGE} · image`)

    // A second flow, not the first one overwritten, named apart as a file manager would.
    await page.getByRole('button', { name: '← Flows' }).click()
    await expect.poll(() => page.getByTestId(`flow-row-${FLOW} (2)`).count(), WAIT).toBe(1)
    expect(await page.getByTestId(`flow-row-${FLOW}`).count()).toBe(1)

    // A quality gate's retry edge in a file is drawn: dashed, in its own colour, named.
    const gated = structuredClone(file)
    gated.name = `${FLOW} with a retry`
    const upscaled = file.nodes.find((n) => n.label === UPSCALE)?.outputs?.[0]?.id ?? null
    const seed = gated.nodes.find((n) => n.label === IMAGE)?.inputs?.find((i) => i.name === 'seed')
    if (!seed) throw new Error(`${IMAGE} has no seed input`)
    seed.retry_source_output_id = upscaled
    const gatedFile = join(home, 'gated.flow.json')
    writeFileSync(gatedFile, JSON.stringify(gated))
    await page.getByTestId('import-file').setInputFiles(gatedFile)
    const retry = page.locator('.react-flow__edge.retry')
    await expect.poll(() => retry.count(), WAIT).toBe(1)
    await expect.poll(edgeCount, WAIT).toBe(3)
    expect(await retry.textContent()).toBe('retry')
    const strokeOf = (selector: string) =>
      page.evaluate<{ dash: string; colour: string }>(`(() => {
        const style = getComputedStyle(document.querySelector(${JSON.stringify(selector)}))
        return { dash: style.strokeDasharray, colour: style.stroke }
      })()`)
    const stroke = await strokeOf('.react-flow__edge.retry .react-flow__edge-path')
    expect(stroke.dash).not.toBe('none')
    const plain = await strokeOf('.react-flow__edge:not(.retry) .react-flow__edge-path')
    expect(stroke.colour).not.toBe(plain.colour)
    await screenshots('canvas-retry', async () => {
      await retry.waitFor()
    })
    expect(errors).toEqual([])
  }, 60_000)
})
