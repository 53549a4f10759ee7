import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const { available } = chromiumAvailability()
const keyringTools = available ? secretServiceAvailability() : { available: false }
const root = join(import.meta.dirname, '..', '..')
const screenshots = join(root, 'docs', 'screenshots')

/** `atelier web` in the keyring's D-Bus session, once it printed its link. */
function startWeb(
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcessWithoutNullStreams; link: string }> {
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'atelier.mjs'), 'web', '--port', '0', '--home', home],
    { cwd: root, env },
  )
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`atelier web printed no link in 90 s; stderr: ${stderr}`))
    }, 90_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const end = stdout.indexOf('\n')
      if (end < 0) return
      clearTimeout(timer)
      resolve({ child, link: stdout.slice(0, end) })
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`atelier web exited (${String(code)}); stderr: ${stderr}`))
    })
  })
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

describe.runIf(available && keyringTools.available)(
  'Settings in the browser mode, with a real keychain',
  { timeout: 120_000 },
  () => {
    let keyring: SecretServiceSession
    let service: TestSandbox
    let browser: Browser
    let web: { child: ChildProcessWithoutNullStreams; link: string }
    let home: string
    let page: Page
    const errors: string[] = []

    beforeAll(async () => {
      mkdirSync(screenshots, { recursive: true })
      home = mkdtempSync(join(tmpdir(), 'atelier-e2e-settings-'))
      keyring = await startSecretService()
      ;[service, browser, web] = await Promise.all([
        startTestSandbox(),
        launchChromium(),
        startWeb(home, keyring.env),
      ])
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(web.link)
    }, 150_000)

    afterAll(async () => {
      await page.close()
      await browser.close()
      // SIGTERM lets it close the core and the sandbox; bounded, then SIGKILL.
      const child = web.child
      const exited = new Promise<boolean>((done) => {
        if (child.exitCode !== null) done(true)
        else
          child.once('exit', () => {
            done(true)
          })
      })
      child.kill('SIGTERM')
      const stopped = await Promise.race([
        exited,
        new Promise<boolean>((done) =>
          setTimeout(() => {
            done(false)
          }, 10_000),
        ),
      ])
      if (!stopped) child.kill('SIGKILL')
      await service.close()
      await keyring.close()
      rmSync(home, { recursive: true, force: true })
    })

    it('adds a profile: the key is tested, kept in the keychain, and shown nowhere', async () => {
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('button', { name: 'Settings' })
        .click()
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent())
        .toBe('Settings')
      const profiles = page.getByRole('list', { name: 'Profiles' })
      await expect.poll(() => profiles.getByText('Local sandbox').count()).toBe(1)

      await page.getByRole('button', { name: 'Add profile…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Add a profile' })
      await dialog.getByLabel('Name').fill('studio')
      await dialog.getByLabel('Service address').fill(service.url)
      await dialog.getByLabel('API key').fill('sk_wrong_key')
      await dialog.getByRole('button', { name: 'Test and save' }).click()
      // The service refused it: said under the key field, nothing kept.
      await expect.poll(() => dialog.getByText(/rejected this key/).count()).toBe(1)
      expect(keyring.lookup('studio')).toBeNull()

      await dialog.getByLabel('API key').fill(service.keys.admin)
      await dialog.getByRole('button', { name: 'Test and save' }).click()
      await expect.poll(() => dialog.count()).toBe(0)
      await expect.poll(() => profiles.getByText('studio', { exact: true }).count()).toBe(1)
      expect(keyring.lookup('studio')).toBe(service.keys.admin)
      expect(await page.content()).not.toContain(service.keys.admin)
      for (const file of filesUnder(home)) {
        expect(readFileSync(file).includes(service.keys.admin), file).toBe(false)
      }
    })

    it('creates a webhook and shows its secret once', async () => {
      await page.getByLabel('New webhook address').fill('https://hooks.example.com/atelier')
      await page.getByRole('button', { name: 'Create webhook' }).click()
      const dialog = page.getByRole('dialog', { name: "The webhook's signing secret" })
      await expect.poll(() => dialog.count()).toBe(1)
      const secret = (await dialog.getByTestId('webhook-secret').textContent()) ?? ''
      expect(secret).toMatch(/^whsec_/)
      expect(await dialog.textContent()).toContain('it will not be shown again')
      await page.screenshot({ path: join(screenshots, 'settings-secret-light.png') })
      await dialog.getByRole('button', { name: 'Done' }).click()
      await expect
        .poll(() =>
          page
            .getByRole('list', { name: 'Webhooks' })
            .getByText(/secret …/)
            .count(),
        )
        .toBe(1)
      expect(await page.content()).not.toContain(secret)
      // Tall enough for every card; the toasts of the steps above are closed first.
      await page.setViewportSize({ width: 1280, height: 1440 })
      for (const close of await page.getByRole('button', { name: 'Dismiss' }).all()) {
        await close.click()
      }
      await page.screenshot({ path: join(screenshots, 'settings-light.png') })
      await page.getByText('Dark', { exact: true }).click()
      await page.screenshot({ path: join(screenshots, 'settings-dark.png') })
      await page.getByText('Light', { exact: true }).click()
      await page.setViewportSize({ width: 1280, height: 900 })
    })

    it('creates a callback secret, shows it once with Copy, and removes it after a confirm', async () => {
      const card = page.getByRole('region', { name: 'Callback secrets' })
      await expect.poll(() => card.getByText('No callback secrets made here yet.').count()).toBe(1)
      await page.getByLabel('New callback secret name').fill('Render farm receiver')
      await page.getByRole('button', { name: 'Create callback secret' }).click()
      const dialog = page.getByRole('dialog', { name: 'The new callback secret' })
      await expect.poll(() => dialog.count()).toBe(1)
      const secret = (await dialog.getByTestId('callback-secret').textContent()) ?? ''
      // The sandbox's form; the service makes it, Atelier only shows it.
      expect(secret).toMatch(/^cbsec_[\w-]{40,}$/)
      expect(await dialog.textContent()).toContain('it will not be shown again')
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
        origin: new URL(page.url()).origin,
      })
      await dialog.getByRole('button', { name: 'Copy' }).click()
      await expect.poll(() => dialog.getByRole('button', { name: 'Copied' }).count()).toBe(1)
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret)
      await page.screenshot({ path: join(screenshots, 'settings-callback-secret-light.png') })
      await dialog.getByRole('button', { name: 'Done' }).click()

      const listed = page.getByRole('list', { name: 'Callback secrets' })
      await expect
        .poll(() => listed.getByText(`secret …${secret.slice(-4)}`, { exact: false }).count())
        .toBe(1)
      expect(await listed.getByText('Render farm receiver').count()).toBe(1)
      // Shown once: not in the page any more, nor in any file of Atelier's. (The local sandbox is
      // the service here: its own database under <home>/sandbox keeps the key it signs with.)
      expect(await page.content()).not.toContain(secret)
      const service = join(home, 'sandbox')
      for (const file of filesUnder(home).filter((f) => !f.startsWith(service))) {
        expect(readFileSync(file).includes(secret), file).toBe(false)
      }

      await page
        .getByRole('button', { name: 'Remove callback secret Render farm receiver' })
        .click()
      const confirm = page.getByRole('dialog', { name: 'Remove this callback secret?' })
      expect(await confirm.textContent()).toContain('no way to delete or revoke a callback secret')
      await confirm.getByRole('button', { name: 'Remove secret' }).click()
      await expect.poll(() => listed.count()).toBe(0)
      expect(await card.getByText('No callback secrets made here yet.').count()).toBe(1)
    })

    it('removes the profile after a confirm, and its key leaves the keychain', async () => {
      await page.getByRole('button', { name: 'Remove profile studio' }).click()
      await page
        .getByRole('dialog', { name: 'Remove profile studio?' })
        .getByRole('button', { name: 'Remove profile' })
        .click()
      const profiles = page.getByRole('list', { name: 'Profiles' })
      await expect.poll(() => profiles.getByText('studio', { exact: true }).count()).toBe(0)
      expect(keyring.lookup('studio')).toBeNull()
      expect(errors).toEqual([])
    })
  },
)
