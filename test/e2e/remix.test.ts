import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Core } from '../../src-main/core'
import { parseFlowDocument } from '../../src-main/executor'
import { embedProvenance } from '../../src-main/provenance'
import { provenanceOfRun } from '../../src-main/provenance/records'
import { sandboxBackend } from '../../src-main/workspace'
import { flowEditorSchemas, type FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Remix in Chromium (issue 20): "Open in editor" from the run page of a flow's run opens the
 * flow as it ran; a picture carrying its record, dropped on the canvas, does the same.
 */

const { available } = chromiumAvailability()
const screenshots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')
const WAIT = { timeout: 20_000, interval: 50 }
const PROMPT = 'a lighthouse in the fog'

/** A local flow "Lighthouse": prompt → text-to-image, its seed on the dice; run once. */
async function runLighthouse(core: Core, orgId: string): Promise<{ runId: string; seed: number }> {
  const model = core.databases.mirror.models.withSlug({ orgId }, 'atelier/text-to-image')
  if (!model) throw new Error('The sandbox has no text-to-image model.')
  const created = await core.flows.create({ name: 'Lighthouse' })
  const nodeId = randomUUID()
  const flow = {
    ...created.flow,
    inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text', is_required: true }],
    outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
    nodes: [
      {
        id: nodeId,
        label: 'Picture',
        type_code: 'model',
        model_id: model.id,
        config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { image: 'picture' } },
        inputs: [
          { id: randomUUID(), name: 'prompt', variable_type_code: 'text' },
          { id: randomUUID(), name: 'width', variable_type_code: 'integer', value: 256 },
          { id: randomUUID(), name: 'height', variable_type_code: 'integer', value: 256 },
          {
            id: randomUUID(),
            name: 'seed',
            variable_type_code: 'seed',
            behavior_code: 'randomize',
          },
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
  await core.flows.save({ id: created.id, flow })
  const ended = new Promise<FlowRunEventMessage>((resolve) => {
    const off = core.onEvent((name, payload) => {
      const message = payload as FlowRunEventMessage
      if (name === 'flowRuns.event' && message.event.type === 'flow-finished') {
        off()
        resolve(message)
      }
    })
  })
  await core.flows.startRun(flowEditorSchemas.run.parse({ flow, inputs: { prompt: PROMPT } }))
  const { event } = await ended
  if (event.type !== 'flow-finished' || event.state !== 'succeeded') {
    throw new Error(`The flow run did not succeed: ${JSON.stringify(event)}`)
  }
  const picture = event.outputs.picture as { run_id?: string } | null
  if (!picture?.run_id) throw new Error('The flow made no picture on the service.')
  const record = provenanceOfRun(core.databases, picture.run_id)
  const seed = record?.seeds[nodeId]?.seed
  if (seed === undefined) throw new Error('The run has no record of its seed.')
  return { runId: picture.run_id, seed }
}

/** The open editor's flow, as the main process stored it. */
async function storedFlowNamed(core: Core, name: string) {
  const summary = (await core.flows.list()).find((flow) => flow.name === name)
  if (!summary) throw new Error(`No flow is named ${name}.`)
  const parsed = parseFlowDocument((await core.flows.get({ id: summary.id })).flow)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

describe.runIf(available)('remix in Chromium', () => {
  let app: App<TestSandbox>
  let core: Core
  let page: Page
  let errors: string[]
  let runId: string
  let seed: number

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true })
    app = await startApp({
      name: 'remix',
      service: () => startTestSandbox({ latencyMs: 5 }),
      stopService: (sandbox) => sandbox.close(),
    })
    core = app.openCore(sandboxBackend(app.service))
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    ;({ runId, seed } = await runLighthouse(core, app.service.orgId))
    ;({ page, errors } = await app.openPage({
      viewport: { width: 1440, height: 1000 },
      colorScheme: 'light',
    }))
  }, 180_000)

  afterAll(async () => {
    await app.close()
  })

  const toasts = () => page.getByRole('region', { name: 'Notifications' })
  const editorTitle = () => page.locator('.flow-title').textContent()

  it('opens the flow as it ran from its run page, its seed locked', async () => {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button', { name: 'Runs' })
      .click()
    await page.locator(`[data-run-id="${runId}"]`).click()
    await page.locator('.run-actions').getByRole('button', { name: 'Open in editor' }).click()
    const dialog = page.getByRole('dialog', { name: 'Open in editor' })
    const story = dialog.getByTestId('remix-story')
    await expect.poll(() => story.textContent(), WAIT).toContain(String(seed))
    expect(await story.textContent()).toContain('atelier/text-to-image')
    expect(await story.textContent()).toContain(runId)
    // The original is this profile's own: a version of it is offered too.
    await dialog.getByRole('button', { name: 'New version of “Lighthouse”' }).waitFor()
    await page.screenshot({ path: join(screenshots, 'remix-open-in-editor.png') })

    await dialog.getByRole('button', { name: 'New flow' }).click()
    await expect.poll(editorTitle, WAIT).toBe('Lighthouse (remix)')
    await expect.poll(() => page.locator('.react-flow__node').count(), WAIT).toBe(1)
    expect(await toasts().textContent()).toContain('Opened “Lighthouse (remix)”')

    const remixed = await storedFlowNamed(core, 'Lighthouse (remix)')
    const seedInput = remixed.nodes[0]?.inputs.find((input) => input.name === 'seed')
    expect(seedInput).toMatchObject({ value: seed, behavior_code: null })
    expect(remixed.inputs[0]?.default_value).toBe(PROMPT)
    expect(errors).toEqual([])
  }, 60_000)

  it('opens the flow that made a picture dropped on the canvas', async () => {
    const record = provenanceOfRun(core.databases, runId)
    if (!record) throw new Error('The run has no record.')
    const detail = await core.runPage.refresh({ runId })
    const url = JSON.stringify(detail).match(/https?:\/\/[^"]+/)?.[0]
    if (!url) throw new Error('The run has no output URL.')
    const made = Buffer.from(await (await fetch(url)).arrayBuffer())
    const picture = Buffer.from(embedProvenance(made, record)).toString('base64')

    const canvas = page.getByTestId('flow-canvas')
    await canvas.waitFor()
    // A file dragged in from the system, as the browser hands it to the page.
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(picture)}), (c) => c.charCodeAt(0))
      const transfer = new DataTransfer()
      transfer.items.add(new File([bytes], 'lighthouse.png', { type: 'image/png' }))
      window.__remixDrop = transfer
      const target = document.querySelector('[data-testid="flow-canvas"]')
      for (const type of ['dragenter', 'dragover']) {
        target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }))
      }
    })()`)
    const overlay = page.getByText('Drop a picture to open the flow that made it')
    await overlay.waitFor()
    await page.screenshot({ path: join(screenshots, 'remix-drop.png') })
    await page.evaluate(`(() => {
      const target = document.querySelector('[data-testid="flow-canvas"]')
      target.dispatchEvent(
        new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: window.__remixDrop }),
      )
    })()`)
    await expect.poll(() => overlay.count(), WAIT).toBe(0)
    await expect.poll(editorTitle, WAIT).toBe('Lighthouse (remix) (2)')
    await expect
      .poll(() => toasts().textContent(), WAIT)
      .toContain('Opened “Lighthouse (remix) (2)”')
    const remixed = await storedFlowNamed(core, 'Lighthouse (remix) (2)')
    expect(remixed.nodes[0]?.inputs.find((input) => input.name === 'seed')?.value).toBe(seed)
    expect(errors).toEqual([])
  }, 60_000)
})
