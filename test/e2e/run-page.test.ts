import { mkdirSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import { startLocalSandbox, type Backend } from '../../src-main/workspace'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startApp, type App, type AppPage } from '../helpers/app-page'
import { chromiumAvailability } from '../helpers/chromium'

const { available } = chromiumAvailability()
const screenshots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots')

/** A callback receiver: keeps each request's signature and hands it to whoever waits. */
async function startReceiver() {
  const signatures: string[] = []
  const waiting = new Map<number, () => void>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      signatures.push(String(req.headers['service-signature'] ?? ''))
      waiting.get(signatures.length - 1)?.()
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok, stored')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/atelier`,
    /** The signature of request `index` (from 0), once it has arrived. */
    signature: (index: number) =>
      new Promise<string>((resolve, reject) => {
        const known = signatures[index]
        if (known !== undefined) {
          resolve(known)
          return
        }
        const timer = setTimeout(() => {
          reject(new Error(`callback ${index} did not arrive within 15 s`))
        }, 15_000)
        waiting.set(index, () => {
          clearTimeout(timer)
          resolve(signatures[index] ?? '')
        })
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      }),
  }
}

async function finished(client: ServiceClient, id: string): Promise<Run> {
  const deadline = Date.now() + 30_000
  for (let round = 0; round < 600; round++) {
    const run = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: id } } })
    if (['succeeded', 'failed', 'canceled'].includes(run.status_code)) return run
    if (Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`run ${id} did not finish in time`)
}

describe.runIf(available)('the run page in Chromium', () => {
  type Receiver = Awaited<ReturnType<typeof startReceiver>>
  let app: App<[Backend, Receiver]>
  let receiver: Receiver
  let secret: string
  let failed: Run
  let pictures: [Run, Run]

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true })
    app = await startApp({
      name: 'run-page',
      service: (home) => Promise.all([startLocalSandbox(join(home, 'sandbox')), startReceiver()]),
      stopService: async ([backend, receiver]) => {
        await backend.close()
        await receiver.close()
      },
    })
    const [backend] = app.service
    receiver = app.service[1]
    // Runs made through the service before the app opens: the app finds them by syncing.
    const client = createServiceClient({ baseUrl: backend.info.url, apiKey: backend.apiKey })
    const made = await client.post('/v1/callback-secrets', { body: { label: 'e2e receiver' } })
    secret = made.plain_secret
    const dispatch = (model: string, input: Record<string, unknown>, callback: boolean) => {
      const [provider = '', name = ''] = model.split('/')
      return client.post('/v1/models/{provider}/{model}/runs', {
        params: { path: { provider, model: name } },
        body: {
          input,
          ...(callback ? { callback_url: receiver.url, callback_secret_id: made.id } : {}),
        },
      })
    }
    const runs = await Promise.all([
      dispatch('atelier/flaky', { prompt: 'a flaky test pattern', failure_rate: 1 }, true),
      dispatch('atelier/text-to-image', { prompt: 'a red fox in snow', seed: 11 }, false),
      dispatch('atelier/text-to-image', { prompt: 'a red fox at dusk', seed: 12 }, false),
    ])
    const [f, a, b] = await Promise.all(runs.map((run) => finished(client, run.id)))
    if (!f || !a || !b) throw new Error('the runs were not made')
    failed = f
    pictures = [a, b]
    await receiver.signature(0)
    app.openCore(backend)
  }, 180_000)

  afterAll(async () => {
    await app.close()
  })

  async function openApp(): Promise<AppPage> {
    const opened = await app.openPage({
      viewport: { width: 1440, height: 1000 },
      colorScheme: 'light',
    })
    await opened.page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('button', { name: 'Runs' })
      .click()
    return opened
  }

  it('shows a failed run, its failure and deliveries; redelivers and checks the signature', async () => {
    const { page, errors } = await openApp()
    await page.locator(`[data-run-id="${failed.id}"]`).click()

    const failure = page.locator('.run-failure')
    await expect.poll(() => failure.textContent()).toContain('The model crashed')
    expect(await failure.textContent()).toContain('MODEL_ERROR · stage inference')
    const deliveries = page.getByRole('region', { name: 'Callback deliveries' })
    await expect.poll(() => deliveries.getByText('Delivered').count()).toBe(1)
    expect(await deliveries.getByRole('list', { name: 'Attempts' }).textContent()).toContain('200')
    // The log, coloured by level, with the error line the model wrote.
    await expect
      .poll(() => page.getByRole('log', { name: 'Log lines' }).textContent())
      .toContain('Inference crashed')
    await page.screenshot({ path: join(screenshots, 'run-page-light.png') })

    await deliveries.getByRole('button', { name: 'Redeliver' }).click()
    const second = await receiver.signature(1)
    // The page asks again while the new delivery is under way, and shows its attempt.
    await expect.poll(() => deliveries.getByText('Delivered').count(), { timeout: 15_000 }).toBe(2)
    const newest = deliveries.locator('.run-delivery').first()
    expect(await newest.textContent()).toContain('Redelivery')
    expect(await newest.getByRole('list', { name: 'Attempts' }).textContent()).toContain('#1')

    await newest.getByRole('button', { name: 'Check a signature…' }).click()
    await newest.getByLabel('Service-Signature the receiver got').fill(second)
    await newest.getByLabel('Callback secret').fill(`${secret}-not-it`)
    await newest.getByRole('button', { name: 'Check signature' }).click()
    await expect.poll(() => newest.getByRole('status').textContent()).toContain('does not match')
    await newest.getByLabel('Callback secret').fill(secret)
    await newest.getByRole('button', { name: 'Check signature' }).click()
    await expect.poll(() => newest.getByRole('status').textContent()).toContain('is valid')

    // The "sent again" toast would cover the deliveries in the picture.
    const toasts = page.getByRole('region', { name: 'Notifications' })
    for (const button of await toasts.getByRole('button', { name: 'Dismiss' }).all()) {
      await button.click()
    }
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: join(screenshots, 'run-page-dark.png') })

    // Esc goes back to the list.
    await page.locator('body').press('Escape')
    await expect.poll(() => page.locator('.run-page').count()).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  })

  it('compares two runs: the changed parameters highlighted, the outputs side by side', async () => {
    const { page, errors } = await openApp()
    for (const run of pictures) {
      await page.getByRole('checkbox', { name: `Select run ${run.id} to compare` }).check()
    }
    await page.getByRole('button', { name: 'Compare', exact: true }).click()
    const params = page.getByRole('table', { name: 'Input parameters' })
    await expect.poll(() => params.locator('tr.changed').count()).toBe(2)
    expect(await params.locator('tr.changed th').allTextContents()).toEqual([
      'prompt changed',
      'seed changed',
    ])
    // Both outputs, as pictures from the media store.
    await expect
      .poll(() => page.locator('.run-compare-outputs img').count(), { timeout: 20_000 })
      .toBe(2)
    await page.screenshot({ path: join(screenshots, 'run-compare-light.png') })
    expect(errors).toEqual([])
    await page.close()
  })
})
