import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const dataDir = mkdtempSync(join(tmpdir(), 'atelier-sandbox-cli-'))

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
})

interface Ready {
  url: string
  orgId: string
  keys: { admin: string; limited: string; otherOrg: string }
}

/** Starts `atelier sandbox` as a user would and waits for its one JSON line. */
function startCli(...args: string[]) {
  const child = spawn(process.execPath, [join(root, 'bin', 'atelier.mjs'), 'sandbox', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const ready = new Promise<Ready>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout })
    reader.on('line', (line) => {
      lines.push(line)
      if (lines.length === 1) resolve(JSON.parse(line) as Ready)
    })
    child.once('exit', (code) => {
      reject(new Error(`sandbox exited with ${code} before it was ready`))
    })
  })
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve(code ?? signal)
    }),
  )
  return { child, ready, exited, lines }
}

describe('atelier sandbox', () => {
  it('prints one JSON line, serves the API, and stops cleanly on SIGTERM', async () => {
    const cli = startCli('--port', '0', '--data', dataDir)
    const ready = await cli.ready
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(ready.orgId).toMatch(/^[0-9a-f-]{36}$/)
    expect(Object.keys(ready.keys).sort()).toEqual(['admin', 'limited', 'otherOrg'])

    const balance = await fetch(`${ready.url}/v1/billing/balance`, {
      headers: { Authorization: `Bearer ${ready.keys.admin}` },
    })
    expect(balance.status).toBe(200)
    expect(await balance.json()).toMatchObject({ org_id: ready.orgId })

    cli.child.kill('SIGTERM')
    expect(await cli.exited).toBe(0)
    expect(cli.lines).toHaveLength(1)
    expect(existsSync(join(dataDir, 'sandbox.db'))).toBe(true)
  })

  // Two starts each: from the sources (a build older than them) a start takes seconds.
  it(
    'keeps its organizations and its keys in --data across restarts',
    { timeout: 60_000 },
    async () => {
      const first = startCli('--data', dataDir)
      const a = await first.ready
      first.child.kill('SIGINT')
      expect(await first.exited).toBe(0)
      // Owner-only, though these are the sandbox's own test keys and not a person's secrets.
      expect(statSync(join(dataDir, 'keys.json')).mode & 0o777).toBe(0o600)

      const second = startCli('--data', dataDir)
      const b = await second.ready
      expect(b.orgId).toBe(a.orgId)
      expect(b.keys).toEqual(a.keys)
      // A profile saved with the first start's key keeps working after the restart.
      const kept = await fetch(`${b.url}/v1/billing/balance`, {
        headers: { Authorization: `Bearer ${a.keys.admin}` },
      })
      expect(kept.status).toBe(200)
      expect(await kept.json()).toMatchObject({ org_id: a.orgId })
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    },
  )

  it(
    'makes new keys when the kept ones are gone, and refuses the old ones',
    { timeout: 60_000 },
    async () => {
      const first = startCli('--data', dataDir)
      const a = await first.ready
      first.child.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      writeFileSync(join(dataDir, 'keys.json'), 'not json')

      const second = startCli('--data', dataDir)
      const b = await second.ready
      expect(b.orgId).toBe(a.orgId)
      expect(b.keys.admin).not.toBe(a.keys.admin)
      const stale = await fetch(`${b.url}/v1/billing/balance`, {
        headers: { Authorization: `Bearer ${a.keys.admin}` },
      })
      expect(stale.status).toBe(401)
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    },
  )

  it('refuses bad flags with exit code 2', async () => {
    const cli = startCli('--port', 'eighty')
    await expect(cli.ready).rejects.toThrow(/exited with 2/)
  })
})
