import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore } from '../../src-main/core'
import { openLogger, requestLogger } from '../../src-main/log'
import { MediaStore } from '../../src-main/media-store'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, isServiceError, newIdempotencyKey } from '../../src-main/service'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { runAtelier, type CliRun } from '../helpers/cli'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const tools = secretServiceAvailability()

type CommandRun = CliRun & { args: string[] }

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

/** Every form a key could take on its way into a file: as is, and through the usual encoders. */
function forms(secret: string): Record<string, Buffer> {
  return {
    utf8: Buffer.from(secret, 'utf8'),
    utf16le: Buffer.from(secret, 'utf16le'),
    base64: Buffer.from(Buffer.from(secret).toString('base64')),
    base64url: Buffer.from(Buffer.from(secret).toString('base64url')),
    url: Buffer.from(encodeURIComponent(secret)),
    json: Buffer.from(JSON.stringify(secret).slice(1, -1)),
    bearer: Buffer.from(`Bearer ${secret}`),
  }
}

describe.skipIf(!tools.available)(
  'the sentinel key through a whole session',
  { timeout: 120_000 },
  () => {
    let keyring: SecretServiceSession
    let sandbox: TestSandbox
    let home: string

    beforeAll(async () => {
      ;[keyring, sandbox] = await Promise.all([
        startSecretService(),
        startTestSandbox({ latencyMs: 0 }),
      ])
      // More than a page of runs, so that the sync logs several pages.
      await seedHistory(sandbox.services, sandbox.orgId, 700)
      home = mkdtempSync(join(tmpdir(), 'atelier-sentinel-'))
    }, 60_000)

    afterAll(async () => {
      await sandbox.close()
      await keyring.close()
      rmSync(home, { recursive: true, force: true })
    })

    /** The real `atelier` binary, as a user runs it, in the private keyring session. */
    async function atelier(
      args: string[],
      input = '',
      env: NodeJS.ProcessEnv = {},
    ): Promise<CommandRun> {
      const run = await runAtelier(['--home', home, ...args], {
        input,
        env: { ...keyring.env, ...env },
      })
      return { args, ...run }
    }

    it('leaves no trace of the key under --home, nor in any output, with logs at debug', async () => {
      const sentinel = sandbox.keys.admin
      const runs: CommandRun[] = []
      const step = async (args: string[], input = '', env: NodeJS.ProcessEnv = {}) => {
        const run = await atelier(args, input, env)
        runs.push(run)
        expect({ args, code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
          args,
          code: 0,
          stderr: '',
        })
        return run
      }

      await step(['profile', 'add', 'main', '--base-url', sandbox.url], `${sentinel}\n`)
      expect(keyring.lookup('main')).toBe(sentinel)

      // A failing answer on the way, so that the error and retry paths are logged too.
      await sandbox.call('PUT', '/_sandbox/faults', {
        body: { rules: [{ operationId: 'listAssets', status: 503, times: 1 }] },
      })
      await step(['--log-level', 'debug', 'sync'])

      // A run dispatched with the same key, the client logging into the same home's log.
      const logger = openLogger({
        home,
        level: 'debug',
        secrets: [sentinel],
        bindings: { process: 'sentinel-test' },
      })
      const client = createServiceClient({
        baseUrl: sandbox.url,
        apiKey: sentinel,
        log: requestLogger(logger),
      })
      const media = new MediaStore({ dir: join(home, 'media'), maxBytes: 50 * 1024 * 1024 })
      try {
        const created = await client.post('/v1/models/{provider}/{model}/runs', {
          params: {
            path: { provider: 'atelier', model: 'text-to-image' },
            header: { 'Idempotency-Key': newIdempotencyKey() },
          },
          body: { input: { prompt: 'a lighthouse at dusk', width: 96, height: 64 } },
        })
        logger.info('run dispatched', { runId: created.id })
        let run: Run = created
        const deadline = Date.now() + 20_000
        while (!['succeeded', 'failed', 'canceled'].includes(run.status_code)) {
          if (Date.now() > deadline) throw new Error(`the run is still ${run.status_code}`)
          await new Promise((resolve) => setTimeout(resolve, 50))
          run = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: run.id } } })
        }
        expect(run.status_code).toBe('succeeded')
        for await (const line of client.list('/v1/runs/{run_id}/logs', {
          params: { path: { run_id: run.id } },
        })) {
          logger.debug('run log', { line })
        }
        const [image] = (run.output?.images ?? []) as { url: string }[]
        if (!image) throw new Error('the run has no image')
        const stored = await media.download(image.url, { kind: 'output', source: `run:${run.id}` })
        await media.thumbnail(stored.sha256)

        // What a careless caller could do: an error, and a message quoting the key outright.
        const missing = await client
          .get('/v1/runs/{run_id}', {
            params: { path: { run_id: '00000000-0000-7000-8000-000000000000' } },
          })
          .catch((error: unknown) => error)
        expect(isServiceError(missing)).toBe(true)
        logger.warn('a lookup failed', { err: missing, sentKey: sentinel })
        logger.error(`careless: the key was ${sentinel}`, {
          headers: { authorization: `Bearer ${sentinel}` },
          encoded: Buffer.from(sentinel).toString('base64'),
        })
      } finally {
        await media.close()
        logger.close()
      }

      // The app's own background sync, on the same home, with the same key.
      const appLog = openLogger({ home, level: 'debug', bindings: { process: 'app' } })
      const core = openCore({ home, backend: sandboxBackend(sandbox), logger: appLog })
      try {
        expect((await core.syncNow()).state).toBe('idle')
      } finally {
        await core.close()
        appLog.close()
      }

      // The run and everything else reach the mirror, the level now from the environment.
      await step(['--json', 'sync'], '', { ATELIER_LOG_LEVEL: 'debug' })
      await step(['profile', 'check'])

      const log = readFileSync(join(home, 'logs', 'atelier.log'), 'utf8')
      // The scan below is not vacuous: the debug log holds the requests of every step.
      const lines = log
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      const messages = lines.map((line) => String(line.msg))
      expect(lines.filter((line) => line.level === 'debug').length).toBeGreaterThan(50)
      expect(messages).toContainEqual(expect.stringMatching(/^GET \/v1\/runs\?.* 200 \d+ ms$/))
      expect(messages).toContainEqual(expect.stringMatching(/^GET \/v1\/assets\?.* 503 \d+ ms$/))
      expect(messages).toContainEqual(
        expect.stringMatching(/^POST \/v1\/models\/atelier\/text-to-image\/runs 201 \d+ ms$/),
      )
      expect(messages).toContainEqual(expect.stringMatching(/^sync runs page$/))
      expect(messages).toContain('sync ok')
      expect(messages).toContain('careless: the key was [REDACTED]')

      const files = filesUnder(home).map((file) => relative(home, file))
      expect(files).toEqual(
        expect.arrayContaining([
          'profiles.json',
          'mirror.sqlite',
          'ledger.sqlite',
          join('logs', 'atelier.log'),
        ]),
      )
      expect(files.some((file) => file.startsWith('media'))).toBe(true)
      for (const file of files) {
        const bytes = readFileSync(join(home, file))
        for (const [form, needle] of Object.entries(forms(sentinel))) {
          expect({ file, form, found: bytes.includes(needle) }).toEqual({
            file,
            form,
            found: false,
          })
        }
      }
      for (const run of runs) {
        for (const [form, needle] of Object.entries(forms(sentinel))) {
          if (form === 'utf16le') continue
          const text = needle.toString()
          expect({ args: run.args, form, out: run.stdout.includes(text) }).toMatchObject({
            out: false,
          })
          expect({ args: run.args, form, err: run.stderr.includes(text) }).toMatchObject({
            err: false,
          })
        }
      }

      await step(['profile', 'remove', 'main'])
      expect(keyring.accounts()).toEqual([])
    })
  },
)
