import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const { available } = chromiumAvailability()
const shots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')
const WAIT = { timeout: 30_000, interval: 100 }

/** A small picture worth looking at: a gradient sky and a sun, different for each seed. */
async function picture(seed: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const hue = (seed * 47) % 360
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="120">
    <defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="hsl(${hue},70%,62%)"/>
      <stop offset="1" stop-color="hsl(${(hue + 60) % 360},65%,32%)"/>
    </linearGradient></defs>
    <rect width="160" height="120" fill="url(#g)"/>
    <circle cx="${40 + ((seed * 23) % 80)}" cy="${30 + ((seed * 11) % 40)}" r="16" fill="hsl(${(hue + 180) % 360},90%,80%)"/>
    <rect y="88" width="160" height="32" fill="hsl(${(hue + 200) % 360},40%,22%)"/>
  </svg>`
  const image = sharp(Buffer.from(svg))
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 85 }).toBuffer()
}

describe.runIf(available)('the asset manager in Chromium', () => {
  let app: App<TestSandbox>
  let home: string
  let page: Page
  let errors: string[]
  let shoot: string

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true })
    app = await startApp({
      name: 'assets',
      service: () =>
        startTestSandbox({
          latencyMs: 20,
          // Each confirmation waits a little, so the upload is seen while it moves.
          faults: [{ operationId: 'confirmAssetUpload', latencyMs: 250 }],
        }),
      stopService: (sandbox) => sandbox.close(),
    })
    home = app.home
    // A folder with sub-folders and duplicates, as a photographer's card would hold.
    shoot = join(home, 'Coast shoot')
    mkdirSync(join(shoot, 'Day 1'), { recursive: true })
    mkdirSync(join(shoot, 'Day 2', 'Selects'), { recursive: true })
    for (let i = 0; i < 8; i++) {
      writeFileSync(join(shoot, 'Day 1', `dunes-${i + 1}.png`), await picture(i, 'png'))
    }
    for (let i = 0; i < 6; i++) {
      writeFileSync(join(shoot, 'Day 2', `pier-${i + 1}.jpg`), await picture(20 + i, 'jpeg'))
    }
    writeFileSync(join(shoot, 'Day 2', 'Selects', 'pier-best.jpg'), await picture(20, 'jpeg'))
    writeFileSync(join(shoot, 'Day 2', 'Selects', 'dunes-best.png'), await picture(3, 'png'))
    writeFileSync(join(shoot, 'cover.png'), await picture(40, 'png'))
    writeFileSync(join(shoot, 'notes.txt'), 'Shot list and releases.')
    app.openCore(sandboxBackend(app.service))
    ;({ page, errors } = await app.openPage({ viewport: { width: 1440, height: 900 } }))
    page.setDefaultTimeout(10_000)
  }, 120_000)

  afterAll(async () => {
    await page.close()
    await app.close()
  })

  it('uploads a folder from the browser mode, with progress, skipped duplicates and the tree', async () => {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button', { name: 'Assets' })
      .click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Assets')

    await page.getByRole('button', { name: 'Choose folder…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Choose a folder to upload' })
    const path = dialog.getByRole('textbox', { name: 'Folder path' })
    // It starts at home; the path is typed, then browsed to, as a person would.
    await expect.poll(() => path.inputValue()).not.toBe('')
    await path.fill(home)
    await path.press('Enter')
    await dialog.getByRole('button', { name: /Coast shoot/ }).click()
    await expect.poll(() => path.inputValue()).toBe(shoot)
    await expect
      .poll(() => dialog.getByRole('list', { name: 'Folders' }).textContent())
      .toContain('Day 1')
    await dialog.getByRole('button', { name: 'Upload this folder' }).click()

    const card = page.getByRole('listitem', { name: 'Upload of Coast shoot' })
    // Midway: some bytes done, not all.
    await expect
      .poll(async () => {
        const now = Number(await card.getByRole('progressbar').getAttribute('aria-valuenow'))
        return now > 0 && now < 100
      }, WAIT)
      .toBe(true)
    await card.getByRole('button', { name: 'Show files' }).click()
    await expect.poll(() => card.getByRole('listitem').count(), WAIT).toBeGreaterThan(0)
    await page.screenshot({ path: join(shots, 'uploads-light.png') })

    await expect.poll(() => card.locator('.upload-state').textContent(), WAIT).toBe('Finished')
    expect(await card.textContent()).toContain('2 duplicates skipped')
    expect(await card.textContent()).toContain('1 file left out')
    expect(await card.textContent()).toContain('17 of 17 files')
    expect(await card.getByRole('progressbar').first().getAttribute('aria-valuenow')).toBe('100')

    // The tree mirrors the folder once the sync after the upload brought it.
    const tree = page.getByRole('tree', { name: 'Asset folders' })
    await expect.poll(() => tree.textContent(), WAIT).toContain('Coast shoot')
    for (const name of ['Day 1', 'Day 2', 'Selects']) {
      await expect.poll(() => tree.getByRole('button', { name, exact: true }).count(), WAIT).toBe(1)
    }
    expect(errors).toEqual([])
  }, 90_000)

  it('browses a folder of the tree and opens an asset with its details', async () => {
    await page.getByRole('button', { name: 'Close the uploads' }).click()
    const tree = page.getByRole('tree', { name: 'Asset folders' })
    await tree.getByRole('button', { name: 'Day 1', exact: true }).click()
    const grid = page.getByRole('grid', { name: 'Assets' })
    await expect.poll(() => grid.getByRole('gridcell').count(), WAIT).toBe(8)
    await grid.getByRole('gridcell', { name: 'dunes-3.png' }).click()
    const detail = page.getByRole('complementary', { name: 'Asset dunes-3.png' })
    await expect.poll(() => detail.textContent(), WAIT).toContain('/Coast shoot/Day 1')
    expect(await detail.textContent()).toContain('160 × 120')
    expect(await detail.textContent()).toContain('No run in the local copy used it yet.')
    // The preview comes through the media store, as a data URL.
    await expect
      .poll(() => detail.locator('img').getAttribute('src'), WAIT)
      .toMatch(/^data:image\/webp;base64,/)

    // Ctrl+A selects every asset shown, Shift+click a range.
    await grid.focus()
    await page.keyboard.press('Control+a')
    await expect
      .poll(() => page.locator('.assets-status').textContent())
      .toContain('8 assets selected')
    await grid.getByRole('gridcell').nth(0).click()
    await grid
      .getByRole('gridcell')
      .nth(3)
      .click({ modifiers: ['Shift'] })
    await expect
      .poll(() => page.locator('.assets-status').textContent())
      .toContain('4 assets selected')
    await grid.getByRole('gridcell', { name: 'dunes-3.png' }).click()

    await tree.getByRole('button', { name: 'All assets' }).click()
    await expect.poll(() => grid.getByRole('gridcell').count(), WAIT).toBe(15)
    await page.screenshot({ path: join(shots, 'assets-light.png') })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: join(shots, 'assets-dark.png') })
    await page.emulateMedia({ colorScheme: 'light' })

    await page.getByRole('radiogroup', { name: 'View' }).getByText('List').click()
    await expect
      .poll(() => page.getByRole('table', { name: 'Assets' }).getByRole('row').count(), WAIT)
      .toBeGreaterThan(10)
    expect(errors).toEqual([])
  }, 60_000)
})
