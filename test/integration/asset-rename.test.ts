import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger } from '../../src-main/log'
import { changedByReplay, OutboxReplayer } from '../../src-main/outbox'
import { openAssetManager, type AssetManager } from '../../src-main/review/assets'
import { startSandbox, type RunningSandbox } from '../../src-main/sandbox'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'

/**
 * An asset renamed in the Assets section: through the outbox to the real sandbox over HTTP,
 * with the mirror and the ledger in a temp dir. The sandbox is stopped to be offline and
 * started again (on another port) to be back, as a person's network would.
 */

const PROFILE = 'test'
const scratch = mkdtempSync(join(tmpdir(), 'atelier-asset-rename-'))
const dataDir = join(scratch, 'sandbox')
let sandbox: RunningSandbox
let dbs: Databases
let orgId: string
let manager: AssetManager
let assets: Asset[]

/** Every request goes to the sandbox running now: a stopped one is an unreachable service. */
function client() {
  return createServiceClient({
    baseUrl: 'http://127.0.0.1:1',
    apiKey: sandbox.keys.admin,
    sleep: () => Promise.resolve(),
    retry: { maxAttempts: 1 },
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input)
      return fetch(`${sandbox.url}${url.pathname}${url.search}`, init)
    },
  })
}

async function onService(path: string, method = 'GET'): Promise<Asset | null> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${sandbox.keys.admin}`, 'X-Organization-Id': orgId },
  })
  if (response.status === 404) return null
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text === '' ? null : (JSON.parse(text) as Asset)
}

function replayer() {
  return new OutboxReplayer({
    client: client(),
    ledger: dbs.ledger,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  })
}

beforeAll(async () => {
  sandbox = await startSandbox({ dataDir, latencyMs: 0, checkResponses: true })
  orgId = sandbox.orgId
  await seedHistory(sandbox.services, orgId, 60)
  const home = join(scratch, 'home')
  dbs = openDatabases(home)
  const synced = await new SyncEngine({
    client: client(),
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  }).syncAll({ collections: ['asset-folders', 'assets'] })
  expect(synced.state).toBe('ok')
  assets = dbs.mirror.assets.list({ orgId, limit: 3 }).items
  expect(assets).toHaveLength(3)
  manager = openAssetManager({
    client: client(),
    databases: dbs,
    profile: PROFILE,
    orgId,
    home,
    logger: openLogger({ home, level: 'error' }),
    emit: () => {},
    syncNow: () => Promise.resolve(),
  })
}, 60_000)

afterAll(async () => {
  await (manager as AssetManager | undefined)?.close()
  await sandbox.close()
  dbs.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('renaming an asset', () => {
  it('is sent at once when online, and renaming back undoes it', async () => {
    const [asset] = assets
    if (!asset) throw new Error('no asset')
    const renamed = await manager.rename({ id: asset.id, name: 'Harbour at dusk.png' })
    expect(renamed).toMatchObject({ id: asset.id, name: 'Harbour at dusk.png' })
    expect(renamed.pendingRename).toBeUndefined()
    expect((await onService(`/v1/assets/${asset.id}`))?.name).toBe('Harbour at dusk.png')
    expect(dbs.mirror.assets.get(asset.id)?.name).toBe('Harbour at dusk.png')

    const back = await manager.rename({ id: asset.id, name: asset.name })
    expect(back.name).toBe(asset.name)
    expect((await onService(`/v1/assets/${asset.id}`))?.name).toBe(asset.name)
  })

  it('offline, shows the new name as waiting, and the replay sends it once the service is back', async () => {
    const [, asset] = assets
    if (!asset) throw new Error('no asset')
    const down = sandbox
    await down.close()

    const answer = await manager.rename({ id: asset.id, name: 'Offline pick.png' })
    expect(answer.name).toBe('Offline pick.png')
    expect(answer.pendingRename).toMatchObject({ state: 'waiting', name: 'Offline pick.png' })
    expect(answer.pendingRename?.message).toContain('Check the network connection')
    // The list shows it too; the mirror keeps the service's name until the service takes it.
    const listed = manager.list({ text: '', limit: 200 })
    const row = 'items' in listed ? listed.items.find((item) => item.id === asset.id) : undefined
    expect(row).toMatchObject({ name: 'Offline pick.png', pendingRename: { state: 'waiting' } })
    expect(dbs.mirror.assets.get(asset.id)?.name).toBe(asset.name)

    sandbox = await startSandbox({ dataDir, latencyMs: 0, checkResponses: true })
    expect(sandbox.url).not.toBe(down.url)
    expect((await onService(`/v1/assets/${asset.id}`))?.name).toBe(asset.name)
    // What the sync's outbox step does once the service answers again.
    const report = await replayer().replay()
    expect(report, report.message).toMatchObject({ state: 'ok', sent: 1, pending: 0 })
    expect(changedByReplay(report)).toEqual(['assets'])

    expect((await onService(`/v1/assets/${asset.id}`))?.name).toBe('Offline pick.png')
    expect(dbs.mirror.assets.get(asset.id)?.name).toBe('Offline pick.png')
    const after = await manager.get({ id: asset.id })
    expect(after.name).toBe('Offline pick.png')
    expect(after.pendingRename).toBeUndefined()
  })

  it('a rename the service refuses shows the old name again, with the reason', async () => {
    const [, , asset] = assets
    if (!asset) throw new Error('no asset')
    // Gone on the service, still in the local copy until the next sync.
    await onService(`/v1/assets/${asset.id}`, 'DELETE')
    const answer = await manager.rename({ id: asset.id, name: 'Never there.png' })
    expect(answer.name).toBe(asset.name)
    expect(answer.pendingRename).toMatchObject({ state: 'refused', name: 'Never there.png' })
    expect(answer.pendingRename?.message).toBeTruthy()
    // A new name replaces the refused one rather than queue behind it.
    const again = await manager.rename({ id: asset.id, name: 'Still not there.png' })
    expect(again.pendingRename).toMatchObject({ state: 'refused', name: 'Still not there.png' })
    expect(
      dbs.ledger.outbox.forSubject(asset.id).filter((entry) => entry.kind === 'asset.rename'),
    ).toHaveLength(1)
  })

  it('refuses an empty or too long name before anything is stored', async () => {
    const handlers = createHandlers({
      platform: 'linux',
      backend: () => null,
      openExternal: () => Promise.resolve(),
      core: () => {
        throw new Error('a refused name must not reach the asset manager')
      },
    })
    const web = { shell: 'web' } as const
    const [asset] = assets
    if (!asset) throw new Error('no asset')
    const empty = await dispatchIpc(handlers, 'assets.rename', { id: asset.id, name: '   ' }, web)
    expect(empty).toMatchObject({
      ok: false,
      error: {
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('A name cannot be empty.') as unknown,
      },
    })
    const long = await dispatchIpc(
      handlers,
      'assets.rename',
      { id: asset.id, name: 'x'.repeat(256) },
      web,
    )
    expect(long).toMatchObject({
      ok: false,
      error: {
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('A name is at most 255 characters.') as unknown,
      },
    })
  })
})
