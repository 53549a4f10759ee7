import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalSandbox, type Backend } from '../../src-main/workspace'
import { startApp, type App } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'

const { available } = chromiumAvailability()
const artifacts = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')

describe.runIf(available)('the app frame in Chromium', () => {
  let app: App<Backend>

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    app = await startApp({
      name: 'shell',
      service: (home) => startLocalSandbox(join(home, 'sandbox')),
      stopService: (backend) => backend.close(),
    })
    // The app's own core, as the desktop app opens it: its home, its sandbox, its first sync.
    app.openCore(app.service)
  }, 120_000)

  afterAll(async () => {
    await app.close()
  })

  it('shows the five sections, each empty, and switches with clicks and shortcuts', async () => {
    const { page, errors } = await app.openPage()

    const nav = page.getByRole('navigation', { name: 'Sections' })
    await expect.poll(() => nav.getByRole('status').textContent()).toBe('Synced just now')
    for (const name of ['Flows', 'Assets', 'Runs', 'Evaluations', 'Settings']) {
      await expect.poll(() => nav.getByRole('button', { name }).count()).toBe(1)
    }
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Flows')
    expect(await page.getByRole('main').getByRole('status').textContent()).toContain('No flows yet')
    // The version comes from the main-process handler, not from the bundle.
    expect(await nav.textContent()).toMatch(/Atelier \d+\.\d+\.\d+ · web/)
    // With no profile the app runs on the local sandbox, and says so.
    expect(await nav.locator('.backend-badge').textContent()).toBe('Local sandbox')
    expect(await nav.locator('.backend-badge').getAttribute('title')).toContain(
      app.service.info.url,
    )

    await nav.getByRole('button', { name: 'Runs' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Runs')
    expect(await page.getByRole('main').getByRole('status').textContent()).toContain('No runs yet')

    await page.keyboard.press('Control+2')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Assets')
    await page.screenshot({ path: join(artifacts, 'assets-light.png') })

    await page.keyboard.press('Control+6')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings')
    await page.getByText('Dark', { exact: true }).click()
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark')
    await page.screenshot({ path: join(artifacts, 'settings-dark.png') })

    expect(errors).toEqual([])
    await page.close()
  })

  it('says plainly when the page is not connected to Atelier', async () => {
    const page = await app.browser.newPage()
    await page.goto(app.renderer.url)
    const alert = page.getByRole('alert')
    await expect.poll(() => alert.count()).toBe(1)
    expect(await alert.textContent()).toContain('not connected to Atelier')
    await page.close()
  })

  it('does not run an inline script injected into the page (CSP)', async () => {
    const page = await app.browser.newPage()
    await page.goto(app.renderer.url)
    // Written as page source so the test project needs no DOM typings.
    await page.evaluate(`{
      const script = document.createElement('script')
      script.textContent = 'window.__injected = true'
      document.body.appendChild(script)
    }`)
    // The same assignment made from outside the page's CSP does land, so the check can see it.
    await page.evaluate('window.__control = true')
    expect(await page.evaluate('typeof window.__control')).toBe('boolean')
    expect(await page.evaluate('typeof window.__injected')).toBe('undefined')
    await page.close()
  })
})
