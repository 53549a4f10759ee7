import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalSandbox, type Backend } from '../../src-main/workspace'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')
const FLOW_NAME = 'Harbour at dusk'

describe.runIf(available)('the command palette, shortcuts, account and toasts in Chromium', () => {
  let app: App<Backend>

  /** A call to the sandbox with the app's own key, as the service would answer it. */
  async function service(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${app.service.info.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${app.service.apiKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    expect(response.ok).toBe(true)
    return response.json()
  }

  const balanceText = async () => {
    const { balance } = (await service('GET', '/v1/billing/balance')) as { balance: string }
    return `${Number(balance).toFixed(4)} credits`
  }

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    app = await startApp({
      name: 'palette',
      service: (home) => startLocalSandbox(join(home, 'sandbox')),
      stopService: (backend) => backend.close(),
    })
    const core = app.openCore(app.service)
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    await core.flows.create({ name: FLOW_NAME })
    await core.flows.create({ name: 'Portrait in oils' })
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  it('opens on Ctrl+K; typing a flow’s name and Enter opens it in the editor', async () => {
    const { page, errors } = await app.openPage()
    await page.keyboard.press('Control+k')
    const palette = page.getByRole('dialog', { name: 'Command palette' })
    await expect.poll(() => palette.count()).toBe(1)
    // Written as page source so the test project needs no DOM typings.
    expect(await page.evaluate('document.activeElement?.hasAttribute("cmdk-input")')).toBe(true)
    await expect.poll(() => palette.getByRole('option', { name: FLOW_NAME }).count()).toBe(1)
    await page.screenshot({ path: join(artifacts, 'palette-light.png') })

    await page.keyboard.type('harbour')
    await expect
      .poll(() => palette.locator('[cmdk-item][data-selected="true"] .palette-label').textContent())
      .toBe(FLOW_NAME)
    await page.keyboard.press('Enter')
    await expect.poll(() => palette.count()).toBe(0)
    const toolbar = page.getByRole('toolbar', { name: 'Flow editor' })
    await expect.poll(() => toolbar.locator('.flow-title').textContent()).toBe(FLOW_NAME)

    // Escape closes it without doing anything; the focus goes back where it was.
    await page.keyboard.press('Control+k')
    await expect.poll(() => palette.count()).toBe(1)
    await page.keyboard.press('Escape')
    await expect.poll(() => palette.count()).toBe(0)
    expect(await toolbar.locator('.flow-title').textContent()).toBe(FLOW_NAME)
    expect(errors).toEqual([])
    await page.close()
  })

  it('switches to the dark theme from the palette, and the help sheet lists Ctrl+K', async () => {
    const { page, errors } = await app.openPage()
    await page.keyboard.press('Control+k')
    await page.keyboard.type('dark theme')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.locator('html').getAttribute('data-theme')).toBe('dark')

    await page.keyboard.press('?')
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await expect.poll(() => sheet.count()).toBe(1)
    const palette = sheet.locator('tr[data-shortcut="palette"]')
    expect(await palette.locator('kbd').allTextContents()).toEqual(['Ctrl', 'K'])
    expect(await palette.textContent()).toContain('Open the command palette')
    expect(await sheet.locator('tr[data-shortcut="editor.undo"] kbd').allTextContents()).toEqual([
      'Ctrl',
      'Z',
    ])
    await page.screenshot({ path: join(artifacts, 'help-sheet-dark.png') })
    await page.keyboard.press('Escape')
    await expect.poll(() => sheet.count()).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  })

  it('shows the sandbox’s organization and balance in the sidebar', async () => {
    const { page, errors } = await app.openPage()
    const account = page.getByRole('region', { name: 'Account' })
    const expected = await balanceText()
    await expect.poll(() => account.getByTestId('balance').textContent()).toBe(expected)
    const { organization } = (await service('GET', '/v1/account')) as {
      organization: { name: string }
    }
    expect(await account.textContent()).toContain(organization.name)
    expect(await account.textContent()).toContain('No profile · local sandbox')
    expect(errors).toEqual([])
    await page.close()
  })

  it('tells a finished sync that brought new runs in a toast, and the balance they left', async () => {
    const { page, errors } = await app.openPage()
    for (const prompt of ['a lighthouse in fog', 'a kite over dunes']) {
      await service('POST', '/v1/models/atelier/text-to-image/runs', { input: { prompt } })
    }
    const area = page.getByRole('region', { name: 'Sync' })
    await area.getByRole('button', { name: 'Sync now' }).click()
    const toast = page
      .getByRole('region', { name: 'Notifications' })
      .getByRole('status')
      .filter({ hasText: 'Synced' })
    await expect.poll(() => toast.count(), { timeout: 15_000 }).toBe(1)
    // What the mirror newly holds, not the reference lists (solutions, catalogs) read whole.
    expect(await toast.textContent()).toContain('2 new runs.')
    const expected = await balanceText()
    await expect
      .poll(() =>
        page.getByRole('region', { name: 'Account' }).getByTestId('balance').textContent(),
      )
      .toBe(expected)
    await page.screenshot({ path: join(artifacts, 'sync-toast-light.png') })
    expect(errors).toEqual([])
    await page.close()
  })
})
