import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SearchResult } from '../../src-shared/domain/search'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEventName } from '../../src-shared/ipc'
import { observeTransactions, type TransactionTiming } from '../../src-main/db/connection'
import { seedHistory } from '../../src-main/sandbox/runs'
import { isSecretsError } from '../../src-main/secrets'
import { startServices, type AppServices } from '../../src-main/services-thread'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The app's services in their own thread (issue 9), as the Electron main and the browser mode
 * start them: a real sandbox as the service, a real home with its databases, every call through
 * the thread's `dispatchIpc`.
 */

const web = { shell: 'web' } as const
let sandbox: TestSandbox
let scratch: string
let services: AppServices
const opened: string[] = []
const events: { event: IpcEventName; payload: unknown }[] = []
/** SQLite work done on this (the main) thread while the services work. */
const mainThreadTransactions: TransactionTiming[] = []
let folderAnswer: string | null = '/chosen/by/the/dialog'

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  await seedHistory(sandbox.services, sandbox.orgId, 50)
  scratch = mkdtempSync(join(tmpdir(), 'atelier-services-thread-'))
  observeTransactions((timing) => {
    mainThreadTransactions.push(timing)
  })
  services = await startServices({
    home: join(scratch, 'home'),
    fallbackToSandbox: false,
    service: {
      label: 'thread-test',
      url: sandbox.url,
      apiKey: sandbox.keys.admin,
      organizationId: sandbox.orgId,
    },
    openExternal: (url) => {
      opened.push(url)
      return Promise.resolve()
    },
    chooseFolder: () => Promise.resolve(folderAnswer),
  })
  services.onEvent((event, payload) => {
    events.push({ event, payload })
  })
}, 120_000)

afterAll(async () => {
  observeTransactions(null)
  await services.close()
  await sandbox.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('the services thread', () => {
  it('runs in a thread of its own, and answers as the handlers do', async () => {
    expect(services.where).toBe('thread')
    expect(services.fallback).toBeUndefined()
    const info = await services.dispatch('app.getInfo', undefined, web)
    expect(info).toMatchObject({
      ok: true,
      value: { shell: 'web', backend: { kind: 'service', label: 'thread-test', url: sandbox.url } },
    })
    const electron = await services.dispatch('app.getInfo', undefined, { shell: 'electron' })
    expect(electron).toMatchObject({ ok: true, value: { shell: 'electron' } })
  })

  it('syncs and searches in the thread: no SQLite work on the main thread, events reach it', async () => {
    mainThreadTransactions.length = 0
    const synced = await services.dispatch('sync.start', undefined, web)
    if (!synced.ok) throw new Error(synced.error.message)
    expect((synced.value as SyncStatus).last).toMatchObject({ outcome: 'ok' })
    const found = await services.dispatch('search.query', { kind: 'runs', limit: 5 }, web)
    if (!found.ok) throw new Error(found.error.message)
    expect((found.value as SearchResult).items.length).toBeGreaterThan(0)
    // The mirror was written and read, all of it in the services thread.
    expect(mainThreadTransactions).toEqual([])
    const statuses = events.filter((e) => e.event === 'sync.status')
    expect(statuses.length).toBeGreaterThan(0)
    // The main thread keeps the latest status for a window that opens later.
    expect(services.syncStatus().last).toMatchObject({ outcome: 'ok' })
  })

  it('validates in the thread with the same answers, and refuses what is not plain data', async () => {
    const bad = await services.dispatch('search.query', { text: 'x', limit: -3 }, web)
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    const unknown = await services.dispatch('no.such', {}, web)
    expect(unknown).toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } })
    const notData = await services.dispatch('search.query', { text: () => 'x' }, web)
    expect(notData).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    // The thread is still there after each.
    expect(await services.dispatch('sync.getStatus', undefined, web)).toMatchObject({ ok: true })
  })

  it('asks the main thread to open links (web links only) and the folder dialog', async () => {
    const link = await services.dispatch('app.openExternal', { url: 'https://example.com/a' }, web)
    expect(link).toEqual({ ok: true, value: null })
    await services.dispatch('app.openExternal', { url: 'javascript:alert(1)' }, web)
    expect(opened).toEqual(['https://example.com/a'])
    expect(await services.dispatch('uploads.chooseFolder', undefined, web)).toEqual({
      ok: true,
      value: { path: '/chosen/by/the/dialog' },
    })
    folderAnswer = null
    expect(await services.dispatch('uploads.chooseFolder', undefined, web)).toEqual({
      ok: true,
      value: { path: null },
    })
  })

  it('throws the profile problem of a failed open as the same kind of error', async () => {
    const home = join(scratch, 'no-profile')
    const failed = await startServices({
      home,
      profile: 'nobody',
      fallbackToSandbox: false,
      openExternal: () => Promise.resolve(),
    }).then(
      () => null,
      (error: unknown) => error,
    )
    expect(isSecretsError(failed)).toBe(true)
    expect(failed).toMatchObject({ code: 'PROFILE_NOT_FOUND' })
  })

  it('answers UNAVAILABLE once closed', async () => {
    const home = join(scratch, 'closing')
    const other = await startServices({
      home,
      fallbackToSandbox: false,
      service: {
        label: 'closing',
        url: sandbox.url,
        apiKey: sandbox.keys.admin,
        organizationId: sandbox.orgId,
      },
      openExternal: () => Promise.resolve(),
    })
    expect(other.where).toBe('thread')
    await other.close()
    expect(await other.dispatch('sync.getStatus', undefined, web)).toMatchObject({
      ok: false,
      error: { code: 'UNAVAILABLE' },
    })
  })
})
