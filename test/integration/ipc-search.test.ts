import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type { SearchResult } from '../../src-shared/domain/search'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The search channel as the window reaches it: the real dispatcher and handlers over a real
 * core that synced a real sandbox, then searched with the sandbox closed.
 */

const PROMPT = 'a brass astrolabe on velvet'

let sandbox: TestSandbox
let home: string
let logger: Logger
let core: Core
const web = { shell: 'web' } as const

function handlers() {
  return createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: () => Promise.resolve(),
    core: () => core,
  })
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  for (const prompt of [PROMPT, 'a lighthouse in fog', 'a second astrolabe, in brass']) {
    const answer = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', {
      body: { input: { prompt } },
    })
    expect(answer.status).toBe(201)
  }
  home = mkdtempSync(join(tmpdir(), 'atelier-ipc-search-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({ home, logger, backend: { ...sandboxBackend(sandbox), close: async () => {} } })
  const status = await core.syncNow()
  expect(status.last?.outcome).toBe('ok')
  await sandbox.close()
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
})

describe('search through IPC', () => {
  it('finds synced runs by the words of their prompt, with the network off', async () => {
    const result = await dispatchIpc(handlers(), 'search.query', { text: 'astrolabe' }, web)
    if (!result.ok) throw new Error(result.error.message)
    const found = result.value as SearchResult
    expect(found.mode).toBe('ranked')
    expect(found.items.map((item) => [item.kind, item.title]).sort()).toEqual([
      ['run', 'a brass astrolabe on velvet'],
      ['run', 'a second astrolabe, in brass'],
    ])
  })

  it('refuses a malformed query before the search runs, naming the field', async () => {
    const result = await dispatchIpc(handlers(), 'search.query', { text: 'x', limit: -3 }, web)
    expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    if (result.ok) return
    expect(result.error.issues?.map((issue) => issue.path)).toContain('limit')
  })

  it('answers a cursor that belongs to no search with its stable code', async () => {
    const result = await dispatchIpc(
      handlers(),
      'search.query',
      { text: 'astrolabe', cursor: 'not-a-cursor' },
      web,
    )
    expect(result).toMatchObject({ ok: false, error: { code: 'SEARCH_INVALID_CURSOR' } })
  })
})
