import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Workflow } from '../../src-shared/api'
import type { Core, Timers } from '../../src-main/core'
import { encodePngChunk } from '../../src-main/provenance/png'
import { startSandboxApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import type { TestSandbox } from '../helpers/sandbox'

/**
 * A ComfyUI picture imported from the flow list, as a person does it: the file chooser takes a
 * PNG ComfyUI saved, a toast tells what the workflow offers, and the editor's palette lists it
 * under Workflows, with no sync in between (the background sync never runs here).
 */

const { available } = chromiumAvailability()
const WAIT = { timeout: 30_000, interval: 50 }
const NO_TIMERS: Timers = { setTimeout: () => null, clearTimeout: () => undefined }
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'comfyui')
const shots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')

/** A PNG as ComfyUI saves it: its graph in `prompt` and `workflow` tEXt chunks. */
async function comfyPng(texts: Record<string, string>): Promise<Buffer> {
  const png = await sharp({
    create: { width: 64, height: 64, channels: 3, background: { r: 230, g: 170, b: 60 } },
  })
    .png()
    .toBuffer()
  const iend = png.length - 12
  const chunks = Object.entries(texts).map((entry) =>
    Buffer.from(encodePngChunk('tEXt', new Uint8Array(Buffer.from(entry.join('\0'), 'latin1')))),
  )
  return Buffer.concat([png.subarray(0, iend), ...chunks, png.subarray(iend)])
}

describe.runIf(available)('importing a ComfyUI file from the flow list, in Chromium', () => {
  let app: App<TestSandbox>
  let sandbox: TestSandbox
  let core: Core
  let page: Page
  let errors: string[] = []

  beforeAll(async () => {
    ;({ app, sandbox, core, page, errors } = await startSandboxApp('workflow-import', {
      sandbox: { latencyMs: 0 },
      core: { timers: NO_TIMERS, firstSyncAfterMs: 3_600_000 },
      page: { viewport: { width: 1440, height: 900 }, until: 'drawn' },
    }))
    page.setDefaultTimeout(15_000)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  it('imports a PNG ComfyUI saved, says what it offers, and the palette lists it under Workflows', async () => {
    const file = join(app.home, 'lighthouse-upscaled.png')
    writeFileSync(
      file,
      await comfyPng({
        prompt: readFileSync(join(FIXTURES, 'custom-node-api.json'), 'utf8'),
      }),
    )

    const nav = page.getByRole('navigation', { name: 'Sections' })
    await nav.getByRole('button', { name: 'Flows' }).click()
    await page.getByRole('button', { name: 'Import a flow or ComfyUI file…' }).waitFor()
    await page.getByTestId('import-file').setInputFiles(file)

    const toast = page.getByTestId('toast').filter({ hasText: 'Lighthouse upscaled' })
    await expect
      .poll(() => toast.textContent(), WAIT)
      .toContain('Imported “Lighthouse upscaled” — 10 inputs, 2 outputs; 1 custom node not exposed')
    expect(await toast.textContent()).toContain('It is in the palette under Workflows.')

    // The service has it, as the file held it.
    const listed = await sandbox.call('GET', '/v1/comfyui-workflows?limit=100')
    const workflow = (listed.body as { items: Workflow[] }).items.find(
      (item) => item.name === 'Lighthouse upscaled',
    )
    expect(workflow?.workflow_json).toEqual(
      JSON.parse(readFileSync(join(FIXTURES, 'custom-node-api.json'), 'utf8')),
    )

    // A new flow's palette offers it, under Workflows.
    await page.getByRole('textbox', { name: 'New flow name' }).fill('Lighthouse remix')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByTestId('flow-canvas').waitFor()
    await page.getByPlaceholder('Search nodes…').fill('Lighthouse')
    const item = page.getByTestId('palette-item-Lighthouse upscaled')
    await item.waitFor()
    const heading = await page
      .locator('[cmdk-group]')
      .filter({ has: item })
      .locator('[cmdk-group-heading]')
      .textContent()
    expect(heading).toBe('Workflows')

    // Put on the canvas, it is a node with the workflow's inputs.
    await item.click()
    const node = page.locator('.react-flow__node').filter({ hasText: 'Lighthouse upscaled' })
    await node.waitFor()
    await expect.poll(() => node.textContent(), WAIT).toContain('Negative prompt')

    mkdirSync(shots, { recursive: true })
    await page.screenshot({ path: join(shots, 'comfyui-import.png') })

    // Nothing of this came from a sync: none ran.
    expect(core.syncStatus().last).toBeNull()
    expect(errors).toEqual([])
  })
})
