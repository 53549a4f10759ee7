import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import { createSettingsService } from '../../src-main/settings'
import { CoreHost } from '../../src-main/workspace'
import type { FlowSummary, StoredFlow } from '../../src-shared/domain/flow-editor'
import type { ProfilesView } from '../../src-shared/domain/settings'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcError, IpcResult } from '../../src-shared/ipc'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Profiles are separate worlds: two profiles on two services (two sandboxes, two
 * organizations), switched as the window switches them, then profile B's service stopped. What
 * the app lists and opens is always the profile in use's, and offline it says so in plain words,
 * quickly, never that a flow was deleted.
 */

const tools = secretServiceAvailability()
const scratch = mkdtempSync(join(tmpdir(), 'atelier-profile-worlds-'))

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

/** A flow of one builtin node, made on the service as another app would. */
async function serviceFlow(sandbox: TestSandbox, name: string): Promise<string> {
  const created = await sandbox.call('POST', '/v1/flows', {
    body: {
      name,
      nodes: [
        {
          label: 'Greeting',
          type_code: 'builtin',
          builtin_node_code: 'text',
          inputs: [{ name: 'value', variable_type_code: 'text', value: 'hello' }],
          outputs: [{ name: 'text', variable_type_code: 'text' }],
        },
      ],
    },
  })
  expect(created.status).toBe(201)
  return (created.body as { id: string }).id
}

const flowFile = (name: string) =>
  JSON.stringify({
    id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    name,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  })

describe.skipIf(!tools.available)('profiles are separate worlds', { timeout: 120_000 }, () => {
  let keyring: SecretServiceSession
  let alpha: TestSandbox
  let beta: TestSandbox
  let betaStopped = false
  let home: string
  let logger: Logger
  let host: CoreHost
  let alphaFlow: string
  let betaFlow: string
  let alphaLocal: string

  const handlers = () =>
    createHandlers({
      platform: process.platform,
      backend: () => host.backend()?.info ?? null,
      openExternal: () => Promise.resolve(),
      core: () => host.core(),
      settings: createSettingsService({ host, logger }),
    })
  const call = (channel: string, args?: unknown): Promise<IpcResult<unknown>> =>
    dispatchIpc(handlers(), channel, args, { shell: 'web' })
  const value = async <T>(channel: string, args?: unknown): Promise<T> => {
    const result = await call(channel, args)
    if (!result.ok) throw new Error(`${channel}: ${result.error.code} ${result.error.message}`)
    return result.value as T
  }
  const failure = async (channel: string, args?: unknown): Promise<IpcError> => {
    const result = await call(channel, args)
    if (result.ok) throw new Error(`${channel} answered ${JSON.stringify(result.value)}`)
    return result.error
  }
  const names = (list: FlowSummary[]) => list.map((flow) => flow.name)

  beforeAll(async () => {
    keyring = await startSecretService()
    // The keychain binding finds the Secret Service on this process's session bus.
    process.env.DBUS_SESSION_BUS_ADDRESS = keyring.env.DBUS_SESSION_BUS_ADDRESS
    alpha = await startTestSandbox()
    beta = await startTestSandbox()
    alphaFlow = await serviceFlow(alpha, 'Alpha portrait')
    betaFlow = await serviceFlow(beta, 'Beta landscape')
    home = mkdtempSync(join(scratch, 'home-'))
    logger = openLogger({ home })
    // The client's own retries stay as they are: opening offline must be quick despite them.
    host = new CoreHost({ home, logger, core: { afterSync: [] } })
    await host.open()
  })

  afterAll(async () => {
    await host.close()
    logger.close()
    await alpha.close()
    if (!betaStopped) await beta.close()
    await keyring.close()
  })

  it('saves a base URL ending in /v1 without it, so the service answers', async () => {
    const view = await value<ProfilesView>('profiles.add', {
      name: 'alpha',
      baseUrl: `${alpha.url}/v1/`,
      apiKey: alpha.keys.admin,
    })
    expect(view.profiles.find((p) => p.name === 'alpha')?.baseUrl).toBe(alpha.url)
    await value('profiles.add', {
      name: 'beta',
      baseUrl: `${beta.url}/v1`,
      apiKey: beta.keys.admin,
    })

    await value('profiles.switch', { name: 'alpha' })
    const synced = await value<SyncStatus>('sync.start')
    expect(synced.last?.outcome).toBe('ok')
    // Not NOT_FOUND: the flow is fetched from alpha's /v1/flows/{id}, not /v1/v1/….
    const opened = await value<StoredFlow>('flows.get', { id: alphaFlow })
    expect(opened).toMatchObject({ name: 'Alpha portrait', nodeCount: 1 })
    alphaLocal = (await value<StoredFlow>('flows.create', { name: 'Alpha sketch' })).id
  })

  it('lists only the profile in use’s flows after a switch', async () => {
    const alphaList = await value<FlowSummary[]>('flows.list')
    expect(names(alphaList)).toEqual(expect.arrayContaining(['Alpha portrait', 'Alpha sketch']))
    expect(names(alphaList)).not.toContain('Beta landscape')

    await value('profiles.switch', { name: 'beta' })
    expect((await value<SyncStatus>('sync.start')).last?.outcome).toBe('ok')
    // As the window does right after a switch: the list is read again, templates and all.
    const betaList = await value<FlowSummary[]>('flows.list')
    expect(names(betaList)).toContain('Beta landscape')
    expect(betaList.some((flow) => flow.source === 'template')).toBe(true)
    expect(betaList.map((flow) => flow.id)).not.toContain(alphaFlow)
    expect(betaList.map((flow) => flow.id)).not.toContain(alphaLocal)
  })

  it('offline, keeps profile B’s flows and templates browsable, and opens fast with a plain reason', async () => {
    const online = await value<FlowSummary[]>('flows.list')
    await beta.close()
    betaStopped = true
    expect((await value<SyncStatus>('sync.start')).last?.outcome).toBe('offline')

    const listed = await value<FlowSummary[]>('flows.list')
    expect(listed.map((flow) => flow.id).sort()).toEqual(online.map((flow) => flow.id).sort())
    expect(listed.map((flow) => flow.id)).not.toContain(alphaFlow)

    // A template came with its nodes: it opens offline.
    const template = listed.find((flow) => flow.source === 'template')
    const openedTemplate = await value<StoredFlow>('flows.get', { id: template?.id })
    expect(openedTemplate.nodeCount).toBeGreaterThan(0)

    // B's own flow was synced from a list, without its nodes, and never opened here.
    let started = performance.now()
    const notHere = await failure('flows.get', { id: betaFlow })
    // The client alone would retry for seconds; a generous bound, far under the 30 s seen before.
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(notHere.code).toBe('FLOW_NOT_SYNCED')
    expect(notHere.message).toContain('You are offline and “Beta landscape” was never opened')
    expect(notHere.message).not.toMatch(/deleted/i)

    // Profile A's flow is not B's, and the service did not say it is gone: never "deleted".
    started = performance.now()
    const other = await failure('flows.get', { id: alphaFlow })
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(other.code).toBe('FLOW_NOT_SYNCED')
    expect(other.message).not.toMatch(/deleted/i)
  })

  it('names an imported flow like a file manager when the name is taken', async () => {
    await value('profiles.switch', { name: 'alpha' })
    const first = await value<StoredFlow>('flows.import', { json: flowFile('Imported') })
    const second = await value<StoredFlow>('flows.import', { json: flowFile('Imported') })
    const third = await value<StoredFlow>('flows.import', { json: flowFile('Imported (2)') })
    expect([first.name, second.name, third.name]).toEqual([
      'Imported',
      'Imported (2)',
      'Imported (3)',
    ])
    // The name is the flow file's too, so an export carries it.
    expect(second.flow.name).toBe('Imported (2)')
    // Another profile's flows do not take names from this one's.
    await value('profiles.switch', { name: null })
    const elsewhere = await value<StoredFlow>('flows.import', { json: flowFile('Imported') })
    expect(elsewhere.name).toBe('Imported')
  })
})
