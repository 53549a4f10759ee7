import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src-main/cli'
import {
  LOG_LEVEL_ENV,
  logFilePath,
  openLogger,
  requestLogger,
  resolveLogLevel,
  type Logger,
} from '../../src-main/log'
import { createServiceClient, isServiceError } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const KEY = 'sk_live_SENTINEL"4f1d/2a9b+7c3e'
const scratch = mkdtempSync(join(tmpdir(), 'atelier-log-'))
const open: Logger[] = []

function newHome(): string {
  return mkdtempSync(join(scratch, 'home-'))
}

function logger(options: Parameters<typeof openLogger>[0]): Logger {
  const made = openLogger(options)
  open.push(made)
  return made
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

afterEach(() => {
  for (const made of open.splice(0)) made.close()
})

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

describe('the log file', () => {
  it('writes one JSON object a line into <home>/logs/atelier.log, from the chosen level up', () => {
    const home = newHome()
    const log = logger({ home, bindings: { process: 'test' } })
    expect(log.file).toBe(join(home, 'logs', 'atelier.log'))
    expect(log.level).toBe('info')
    log.debug('not at info')
    log.info('synced', { fetched: 3 })
    log.child({ component: 'sync' }).warn('offline')
    log.error('broken', { err: new Error('disk full') })
    const written = lines(log.file)
    expect(written.map((line) => [line.level, line.msg])).toEqual([
      ['info', 'synced'],
      ['warn', 'offline'],
      ['error', 'broken'],
    ])
    expect(written[0]).toMatchObject({ fetched: 3, process: 'test', pid: process.pid })
    expect(written[1]).toMatchObject({ component: 'sync' })
    expect(written[2]?.err).toMatchObject({ type: 'Error', message: 'disk full' })
    expect(typeof written[0]?.time).toBe('string')

    const debug = logger({ home, level: 'debug' })
    debug.debug('now it is')
    expect(lines(log.file).at(-1)).toMatchObject({ level: 'debug', msg: 'now it is' })

    // After close, nothing more is written, and a second close is harmless.
    debug.close()
    debug.close()
    debug.error('too late')
    expect(lines(log.file).at(-1)?.msg).toBe('now it is')
  })

  it('sets a file over the cap aside as .1, at open and while writing, keeping one generation', () => {
    const home = newHome()
    const file = logFilePath(home)
    mkdirSync(join(home, 'logs'))
    writeFileSync(file, `${'x'.repeat(5000)}\n`)
    const log = logger({ home, maxBytes: 4096 })
    expect(readFileSync(`${file}.1`, 'utf8')).toHaveLength(5001)
    for (let i = 0; i < 200; i++) log.info(`line ${i}`, { padding: 'y'.repeat(40) })
    for (const path of [file, `${file}.1`]) {
      const text = readFileSync(path, 'utf8')
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096)
      // Whole lines only: every line parses.
      expect(() => lines(path)).not.toThrow()
    }
    expect(existsSync(`${file}.2`)).toBe(false)
    expect(lines(file).at(-1)?.msg).toBe('line 199')
    const total = lines(file).length + lines(`${file}.1`).length
    expect(total).toBeGreaterThan(20)
    expect(total).toBeLessThan(200)
  })

  it('never writes a key: by field name, in messages, errors and stacks, in its encodings', () => {
    const home = newHome()
    const log = logger({ home, level: 'debug', secrets: [KEY] })
    const later = 'sk_added_later_0123456789'
    const child = log.child({ component: 'service' })
    log.addSecret(later)
    log.info(`the key is ${KEY}`, {
      apiKey: 'named-apiKey-value',
      key: 'named-key-value',
      headers: { authorization: 'Basic named-header-value', 'x-api-key': 'named-x-api-key' },
      request: { authorization: 'nested-authorization', token: 'nested-token' },
    })
    child.error('request failed', { err: new Error(`refused ${KEY} and ${later}`) })
    child.warn('encoded', {
      url: `https://example.com/?k=${encodeURIComponent(KEY)}`,
      b64: Buffer.from(KEY).toString('base64'),
      b64url: Buffer.from(KEY).toString('base64url'),
      json: JSON.stringify({ key: KEY }),
    })
    log.debug('a header someone printed: Authorization: Bearer not-registered-token-123')
    const text = readFileSync(log.file, 'utf8')
    for (const secret of [
      KEY,
      later,
      encodeURIComponent(KEY),
      Buffer.from(KEY).toString('base64'),
      Buffer.from(KEY).toString('base64url'),
      JSON.stringify(KEY).slice(1, -1),
      'named-apiKey-value',
      'named-key-value',
      'named-header-value',
      'named-x-api-key',
      'nested-authorization',
      'nested-token',
      'not-registered-token-123',
    ]) {
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false })
    }
    const written = lines(log.file)
    expect(written).toHaveLength(4)
    expect(written[0]?.msg).toBe('the key is [REDACTED]')
    expect(JSON.stringify(written[1]?.err)).toContain('refused [REDACTED] and [REDACTED]')
  })
})

describe('the log level', () => {
  it('comes from the option, else the environment, else info; a bad value says why', () => {
    expect(resolveLogLevel('debug', { [LOG_LEVEL_ENV]: 'error' })).toEqual({ level: 'debug' })
    expect(resolveLogLevel(undefined, { [LOG_LEVEL_ENV]: 'WARN' })).toEqual({ level: 'warn' })
    expect(resolveLogLevel(undefined, {})).toEqual({ level: 'info' })
    const bad = resolveLogLevel(undefined, { [LOG_LEVEL_ENV]: 'verbose' })
    expect(bad.level).toBe('info')
    expect(bad.problem).toContain('ATELIER_LOG_LEVEL is "verbose"')
    expect(bad.problem).toContain('error, warn, info, debug')
  })

  it('is a global option of the command, which refuses a level that does not exist', async () => {
    const out: string[] = []
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t) }
    expect(await runCli(['--log-level', 'loud', 'version'], io)).toBe(2)
    expect(out.join('')).toContain('Allowed choices are error, warn, info, debug')
    const saved = process.env[LOG_LEVEL_ENV]
    try {
      process.env[LOG_LEVEL_ENV] = 'chatty'
      out.length = 0
      expect(await runCli(['version'], io)).toBe(2)
      expect(out.join('')).toContain(`from env '${LOG_LEVEL_ENV}' is invalid`)
      process.env[LOG_LEVEL_ENV] = 'debug'
      expect(await runCli(['--log-level', 'warn', 'version'], io)).toBe(0)
    } finally {
      if (saved === undefined) Reflect.deleteProperty(process.env, LOG_LEVEL_ENV)
      else process.env[LOG_LEVEL_ENV] = saved
    }
  })
})

describe('the service client log hook', () => {
  let sandbox: TestSandbox

  beforeAll(async () => {
    sandbox = await startTestSandbox({ latencyMs: 0 })
  })

  afterAll(async () => {
    await sandbox.close()
  })

  it('writes a debug line per attempt, with method, path, status, time and attempt; never the key', async () => {
    const home = newHome()
    const log = logger({ home, level: 'debug', secrets: [sandbox.keys.admin] })
    const client = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      log: requestLogger(log),
    })
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ operationId: 'getBalance', status: 503, times: 1 }] },
    })
    await client.get('/v1/billing/balance')
    await client.get('/v1/runs', { params: { query: { limit: 5, q: 'status_code=succeeded' } } })
    // A parameter named like a credential is masked, whatever the endpoint makes of it.
    const unknown = await client
      .get('/v1/account', { params: { query: { access_token: 'query-secret-1' } } } as never)
      .catch((error: unknown) => error)
    expect(isServiceError(unknown) ? unknown.status : 200).toBeGreaterThanOrEqual(200)

    const written = lines(log.file).filter((line) => line.component === 'service')
    expect(written.slice(0, 3)).toEqual([
      expect.objectContaining({
        level: 'debug',
        method: 'GET',
        path: '/v1/billing/balance',
        query: '',
        attempt: 1,
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        ms: expect.any(Number),
        msg: expect.stringMatching(/^GET \/v1\/billing\/balance 503 \d+ ms$/),
      }),
      expect.objectContaining({ path: '/v1/billing/balance', attempt: 2, status: 200 }),
      expect.objectContaining({
        path: '/v1/runs',
        query: 'limit=5&q=status_code=succeeded',
        status: 200,
        msg: expect.stringMatching(/^GET \/v1\/runs\?limit=5&q=status_code=succeeded 200 \d+ ms$/),
      }),
    ])
    expect(written[3]).toMatchObject({ path: '/v1/account', query: 'access_token=[REDACTED]' })
    const text = readFileSync(log.file, 'utf8')
    expect(text).not.toContain(sandbox.keys.admin)
    expect(text).not.toContain('query-secret-1')

    // At info the hook writes nothing.
    const quiet = logger({ home: newHome(), level: 'info' })
    const plain = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      log: requestLogger(quiet),
    })
    await plain.get('/v1/billing/balance')
    expect(existsSync(quiet.file) ? readFileSync(quiet.file, 'utf8') : '').toBe('')
  })
})
