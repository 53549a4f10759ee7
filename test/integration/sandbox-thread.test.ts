import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSandboxThread } from '../../src-main/workspace/sandbox-thread'

/**
 * The app's local sandbox in a worker thread of its own (`src-main/workspace/sandbox-thread`):
 * started from the sources as the tests run them (the thread's tsx entry), it answers over HTTP
 * with the keys it handed over, keeps its data in the folder given, and is gone once closed.
 */

let scratch: string
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'atelier-sandbox-thread-'))
})
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

const account = (url: string, key: string) =>
  fetch(`${url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })

describe('the local sandbox in its own thread', () => {
  it('answers with the keys it gave, keeps its data in the folder, and stops when closed', async () => {
    const dataDir = join(scratch, 'kept')
    const listening = () =>
      process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length
    const before = listening()
    const sandbox = await startSandboxThread(dataDir)
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const answer = await account(sandbox.url, sandbox.keys.admin)
    expect(answer.status).toBe(200)
    const body = (await answer.json()) as { organization: { id: string } }
    expect(body.organization.id).toBe(sandbox.orgId)
    expect((await account(sandbox.url, 'not-a-key')).status).toBe(401)
    // Its server listens in its own thread: one started in this thread would be listed here.
    expect(listening()).toBe(before)
    expect(existsSync(join(dataDir, 'sandbox.db'))).toBe(true)

    await sandbox.close()
    await expect(account(sandbox.url, sandbox.keys.admin)).rejects.toThrow()
    // Closing twice is one close.
    await sandbox.close()
  })

  it("fails with the sandbox's own message when its folder cannot hold it", async () => {
    const notAFolder = join(scratch, 'a-file')
    writeFileSync(notAFolder, 'not a folder')
    await expect(startSandboxThread(notAFolder)).rejects.toThrow(/a-file/)
  })
})
