import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases, type UploadFile } from '../../src-main/db'
import { createServiceClient, type RequestLog, type ServiceClient } from '../../src-main/service'
import {
  createPartLimiter,
  isUploadTransferError,
  uploadFile,
  type PartLimiter,
  type TransferContext,
  type TransferEvent,
  type TransferFile,
  type TransferResult,
  type UploadTransferError,
} from '../../src-main/uploads/transfer'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const MiB = 1024 * 1024
const PART = 8 * MiB

let sandbox: TestSandbox
/** Moves the sandbox's clock (and so its URL and upload expiries) forward. */
let clockOffsetMs = 0
let home: string
let dir: string
let databases: Databases
let service: ServiceClient
let manifestId: string

/** Every API request the service client made. */
const apiRequests: RequestLog[] = []

interface StoragePut {
  url: string
  /** Bytes fetch actually read from the part's body. */
  bytes: number
  status: number | null
  startedMs: number
  authorization: boolean
}
/** Every storage PUT, in order. */
const puts: StoragePut[] = []
let inFlight = 0
let maxInFlight = 0

/** The real fetch, counting storage PUTs, the body bytes they send and how many overlap. */
const countingFetch: typeof fetch = async (input, init) => {
  const put: StoragePut = {
    url: input instanceof Request ? input.url : input.toString(),
    bytes: 0,
    status: null,
    startedMs: Date.now(),
    authorization: new Headers(init?.headers).has('Authorization'),
  }
  puts.push(put)
  const source = init?.body as AsyncIterable<Uint8Array> | Uint8Array | undefined
  // A body from memory is handed over whole.
  if (source instanceof Uint8Array) put.bytes = source.length
  const body =
    source && Symbol.asyncIterator in source
      ? (async function* () {
          for await (const chunk of source) {
            put.bytes += chunk.length
            yield chunk
          }
        })()
      : init?.body
  inFlight++
  maxInFlight = Math.max(maxInFlight, inFlight)
  try {
    const response = await fetch(input, { ...init, body })
    put.status = response.status
    return response
  } finally {
    inFlight--
  }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ clock: () => Date.now() + clockOffsetMs })
  home = mkdtempSync(join(tmpdir(), 'atelier-transfer-home-'))
  dir = mkdtempSync(join(tmpdir(), 'atelier-transfer-files-'))
  databases = openDatabases(home)
  service = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 10, maxDelayMs: 200 },
    log: (entry) => apiRequests.push(entry),
  })
  manifestId = databases.ledger.uploads.createManifest({
    profile: 'default',
    orgId: sandbox.orgId,
    rootPath: dir,
  }).id
})

afterEach(async () => {
  await sandbox.call('DELETE', '/_sandbox/faults')
})

afterAll(async () => {
  databases.mirror.close()
  databases.ledger.close()
  await sandbox.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
})

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** A real file in the folder, listed in the manifest and hashed, as the scanner leaves it. */
function hashedFile(name: string, bytes: Buffer, contentType = 'application/octet-stream') {
  const path = join(dir, name)
  writeFileSync(path, bytes)
  const { size, mtimeMs } = statSync(path)
  const { uploads } = databases.ledger
  // Whole milliseconds, as the scanner lists them.
  uploads.addFiles(manifestId, [
    { relativePath: name, sizeBytes: size, mtimeMs: Math.floor(mtimeMs) },
  ])
  const row = uploads
    .files(manifestId, { limit: 1000 })
    .items.find((file) => file.relativePath === name)
  if (!row) throw new Error(`${name} was not listed`)
  uploads.setHash(row.seq, sha256(bytes), contentType)
  const file: TransferFile = { row: rowOf(row.seq), path, folderId: null, filename: name }
  return file
}

function rowOf(seq: number): UploadFile {
  const row = databases.ledger.uploads.getFile(seq)
  if (!row) throw new Error(`no file ${seq}`)
  return row
}

interface Sent {
  result: TransferResult
  events: TransferEvent[]
  puts: StoragePut[]
  api: RequestLog[]
}

function contextFor(
  events: TransferEvent[],
  options: Partial<TransferContext> & { onEvent?: (event: TransferEvent) => void } = {},
): TransferContext {
  const { onEvent, ...rest } = options
  return {
    service,
    uploads: databases.ledger.uploads,
    limiter: createPartLimiter(4),
    signal: new AbortController().signal,
    fetch: countingFetch,
    retry: { attempts: 4, baseDelayMs: 10, maxDelayMs: 2_000, stallTimeoutMs: 10_000 },
    onProgress: (event) => {
      events.push(event)
      onEvent?.(event)
    },
    ...rest,
  }
}

/** Uploads the file and answers what it took, in requests, PUTs and events. */
async function send(
  file: TransferFile,
  options: Parameters<typeof contextFor>[1] = {},
): Promise<Sent> {
  const events: TransferEvent[] = []
  const putsBefore = puts.length
  const apiBefore = apiRequests.length
  const result = await uploadFile(contextFor(events, options), file)
  return { result, events, puts: puts.slice(putsBefore), api: apiRequests.slice(apiBefore) }
}

/** The error the upload fails with, and what it sent meanwhile; fails the test if it succeeds. */
async function failure(
  file: TransferFile,
  options: Parameters<typeof contextFor>[1] = {},
): Promise<{ error: UploadTransferError; events: TransferEvent[]; puts: StoragePut[] }> {
  const events: TransferEvent[] = []
  const putsBefore = puts.length
  try {
    await uploadFile(contextFor(events, options), file)
  } catch (error) {
    if (!isUploadTransferError(error)) throw error
    return { error, events, puts: puts.slice(putsBefore) }
  }
  throw new Error('the upload succeeded')
}

/** The sha256 of the asset's bytes as the sandbox serves them through the asset's URL. */
async function storedSha256(assetId: string | null): Promise<string> {
  if (assetId === null) throw new Error('no asset id')
  const asset = await service.get('/v1/assets/{asset_id}', {
    params: { path: { asset_id: assetId } },
  })
  if (asset.url === null) throw new Error('the asset has no download URL')
  const response = await fetch(asset.url)
  expect(response.status).toBe(200)
  return sha256(new Uint8Array(await response.arrayBuffer()))
}

const states = (events: TransferEvent[]) =>
  events.flatMap((event) => (event.type === 'state' ? [event.state] : []))
const bytesOf = (events: TransferEvent[]) =>
  events.reduce((sum, event) => sum + (event.type === 'bytes' ? event.bytes : 0), 0)
const calls = (api: RequestLog[], method: string, path: RegExp) =>
  api.filter((entry) => entry.method === method && path.test(entry.path)).length

async function setFaults(rules: unknown[]): Promise<void> {
  const answer = await sandbox.call('PUT', '/_sandbox/faults', { body: { rules } })
  expect(answer.status).toBe(200)
}

describe('uploadFile', () => {
  let small: { file: TransferFile; bytes: Buffer; assetId: string | null }

  it('uploads a one-part file whose bytes arrive intact, then leaves it alone', async () => {
    const bytes = randomBytes(300 * 1024)
    const file = hashedFile('small.bin', bytes)
    const sent = await send(file)

    expect(sent.result).toMatchObject({ state: 'confirmed', alreadyFinished: false, partsSent: 1 })
    expect(sent.result.bytesSent).toBe(bytes.length)
    expect(bytesOf(sent.events)).toBe(bytes.length)
    expect(states(sent.events)).toEqual(['declaring', 'uploading', 'confirming', 'done'])
    expect(sent.puts).toHaveLength(1)
    expect(sent.puts[0]).toMatchObject({ status: 200, bytes: bytes.length, authorization: false })
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'confirmed', assetId: sent.result.assetId })
    expect(databases.ledger.uploads.finishedParts(file.row.seq)).toEqual([
      { partNumber: 1, sizeBytes: bytes.length, etag: expect.any(String) },
    ])
    small = { file, bytes, assetId: sent.result.assetId }

    // Confirmed in the ledger: nothing is asked or sent again.
    const again = await send(file)
    expect(again.result).toMatchObject({
      state: 'confirmed',
      alreadyFinished: true,
      assetId: small.assetId,
    })
    expect(again.puts).toHaveLength(0)
    expect(again.api).toHaveLength(0)
  })

  it('uploads a 20 MiB file in three 8 MiB parts', async () => {
    const bytes = randomBytes(20 * MiB)
    const file = hashedFile('large.bin', bytes)
    const sent = await send(file)

    expect(sent.result).toMatchObject({ state: 'confirmed', partsSent: 3 })
    expect(sent.puts.map((put) => [put.status, put.bytes])).toEqual([
      [200, PART],
      [200, PART],
      [200, 4 * MiB],
    ])
    expect(
      databases.ledger.uploads.finishedParts(file.row.seq).map((part) => part.sizeBytes),
    ).toEqual([PART, PART, 4 * MiB])
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
  })

  it('sends no bytes for a file the organization already holds', async () => {
    const file = hashedFile('small-copy.bin', small.bytes)
    const sent = await send(file)

    expect(sent.result).toMatchObject({
      state: 'duplicate',
      assetId: small.assetId,
      bytesSent: 0,
    })
    expect(sent.puts).toHaveLength(0)
    expect(states(sent.events)).toEqual(['declaring', 'duplicate'])
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'duplicate', assetId: small.assetId })
  })

  it('keeps parts in flight within the limiter shared by two files', async () => {
    const a = hashedFile('shared-a.bin', randomBytes(4 * MiB))
    const b = hashedFile('shared-b.bin', randomBytes(4 * MiB))
    const limiter: PartLimiter = createPartLimiter(2)
    maxInFlight = 0
    const [sentA, sentB] = await Promise.all([
      send(a, { limiter, partSize: MiB }),
      send(b, { limiter, partSize: MiB }),
    ])

    expect(sentA.result.partsSent + sentB.result.partsSent).toBe(8)
    expect(maxInFlight).toBe(2)
  })

  it('resumes after an abort, sending only the parts storage lacks', async () => {
    const bytes = randomBytes(20 * MiB)
    const file = hashedFile('resumed.bin', bytes)
    const controller = new AbortController()
    const stopped = await failure(file, {
      limiter: createPartLimiter(1),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'part') controller.abort()
      },
    })
    expect(stopped.error.code).toBe('ABORTED')
    expect(stopped.puts).toHaveLength(1)
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'uploading' })
    expect(databases.ledger.uploads.finishedParts(file.row.seq).map((p) => p.partNumber)).toEqual([
      1,
    ])

    const resumed = await send(file)
    expect(resumed.result).toMatchObject({ state: 'confirmed', partsSent: 2 })
    expect(resumed.result.bytesSent).toBe(bytes.length - PART)
    expect(resumed.puts).toHaveLength(2)
    expect(resumed.puts.every((put) => !put.url.includes('/parts/1?'))).toBe(true)
    expect(calls(resumed.api, 'POST', /^\/v1\/asset-uploads$/)).toBe(0)
    expect(calls(resumed.api, 'GET', /^\/v1\/asset-uploads\/[^/]+$/)).toBe(1)
    expect(states(resumed.events)[0]).toBe('resuming')
    expect(await storedSha256(resumed.result.assetId)).toBe(sha256(bytes))
  })

  it('refreshes part URLs that expire mid-upload instead of failing', async () => {
    const bytes = randomBytes(20 * MiB)
    const file = hashedFile('slow.bin', bytes)
    const sent = await send(file, {
      limiter: createPartLimiter(1),
      onEvent: (event) => {
        // The URLs of parts 2 and 3 (15 minutes) have expired by the sandbox's clock.
        if (event.type === 'part' && event.partNumber === 1) clockOffsetMs += 16 * 60 * 1000
      },
    })

    expect(sent.result.state).toBe('confirmed')
    expect(sent.puts.map((put) => put.status)).toEqual([200, 403, 200, 403, 200])
    expect(calls(sent.api, 'POST', /\/parts$/)).toBe(2)
    // Bytes of the refused attempts count too: the caller can see what was sent twice.
    expect(sent.result.bytesSent).toBe(sent.puts.reduce((sum, put) => sum + put.bytes, 0))
    expect(bytesOf(sent.events)).toBe(sent.result.bytesSent)
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
  })

  it('survives storage 503s and lost answers to the declaration and the confirmation', async () => {
    const bytes = randomBytes(3 * MiB)
    const file = hashedFile('flaky.bin', bytes)
    await setFaults([
      { method: 'PUT', pathPrefix: '/_storage', status: 503, times: 2 },
      { operationId: 'createAssetUpload', reset: 'after', times: 1 },
      { operationId: 'confirmAssetUpload', reset: 'after', times: 1 },
    ])
    const sent = await send(file, { partSize: MiB })

    expect(sent.result.state).toBe('confirmed')
    expect(sent.puts.filter((put) => put.status === 503)).toHaveLength(2)
    expect(sent.puts.filter((put) => put.status === 200)).toHaveLength(3)
    expect(calls(sent.api, 'POST', /^\/v1\/asset-uploads$/)).toBe(2)
    expect(calls(sent.api, 'POST', /\/confirmations$/)).toBe(2)
    const same = await service.get('/v1/assets', {
      params: { query: { q: `sha256=${sha256(bytes)}`, limit: 10 } },
    })
    expect(same.items.map((asset) => asset.id)).toEqual([sent.result.assetId])
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
  })

  it('finishes a file whose confirmation went through but whose answer was lost', async () => {
    const bytes = randomBytes(200 * 1024)
    const file = hashedFile('lost-answer.bin', bytes)
    await setFaults([{ operationId: 'confirmAssetUpload', reset: 'after', times: 1 }])
    // One attempt only: the lost answer fails this call, as a crash would have.
    const lost = await failure(file, { retry: { attempts: 1 } })
    expect(lost.error.code).toBe('SERVICE_UNREACHABLE')
    expect(lost.error.retryable).toBe(true)

    const again = await send(file)
    expect(again.result).toMatchObject({ state: 'confirmed', bytesSent: 0 })
    expect(again.puts).toHaveLength(0)
    expect(calls(again.api, 'POST', /\/confirmations$/)).toBe(0)
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'confirmed', assetId: again.result.assetId })
    expect(await storedSha256(again.result.assetId)).toBe(sha256(bytes))
  })

  it("waits as long as storage's Retry-After asks", async () => {
    const file = hashedFile('throttled.bin', randomBytes(64 * 1024))
    await setFaults([
      { method: 'PUT', pathPrefix: '/_storage', status: 429, retryAfterSeconds: 1, times: 1 },
    ])
    const sent = await send(file)

    expect(sent.result.state).toBe('confirmed')
    expect(sent.puts.map((put) => put.status)).toEqual([429, 200])
    const [refused, accepted] = sent.puts
    if (!refused || !accepted) throw new Error('two PUTs expected')
    expect(accepted.startedMs - refused.startedMs).toBeGreaterThanOrEqual(950)
  })

  it('gives up on a PUT that stalls and sends the part again', async () => {
    const bytes = randomBytes(32 * 1024)
    const file = hashedFile('stalled.bin', bytes)
    await setFaults([{ method: 'PUT', pathPrefix: '/_storage', latencyMs: 3_000, times: 1 }])
    const sent = await send(file, {
      retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 100, stallTimeoutMs: 300 },
    })

    expect(sent.result.state).toBe('confirmed')
    expect(sent.puts.map((put) => put.status)).toEqual([null, 200])
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
  })

  it('fails with STORAGE_UNREACHABLE when storage keeps failing, keeping the parts it took', async () => {
    const file = hashedFile('unreachable.bin', randomBytes(2 * MiB + 10))
    const failed = await failure(file, {
      partSize: MiB,
      limiter: createPartLimiter(1),
      onEvent: (event) => {
        // Set in place (as PUT /_sandbox/faults would) so that it holds from part 2 on.
        if (event.type === 'part' && event.partNumber === 1) {
          sandbox.services.faults.set([
            { method: 'PUT', pathPrefix: '/_storage/uploads', status: 503, times: 100 },
          ])
        }
      },
    })

    expect(failed.error.code).toBe('STORAGE_UNREACHABLE')
    expect(failed.error.message).toMatch(/^Part 2 of .*HTTP 503.*4 attempt/)
    expect(failed.puts.map((put) => put.status)).toEqual([200, 503, 503, 503, 503])
    expect(states(failed.events).at(-1)).toBe('failed')
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'failed', lastError: failed.error.message })
    expect(databases.ledger.uploads.finishedParts(file.row.seq).map((p) => p.partNumber)).toEqual([
      1,
    ])
  })

  it('fails with FILE_CHANGED when the file is modified during the upload', async () => {
    const bytes = randomBytes(3 * MiB)
    const file = hashedFile('edited.bin', bytes)
    const failed = await failure(file, {
      partSize: MiB,
      onEvent: (event) => {
        if (event.type === 'state' && event.state === 'uploading') {
          // Same size, other bytes, a later mtime: only the mtime can tell.
          writeFileSync(file.path, randomBytes(bytes.length))
          const later = new Date(Date.now() + 10_000)
          utimesSync(file.path, later, later)
        }
      },
    })

    expect(failed.error.code).toBe('FILE_CHANGED')
    expect(failed.puts).toHaveLength(3)
    expect(states(failed.events)).not.toContain('confirming')
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'failed', assetId: null })
  })

  it('fails with FILE_CHANGED, not a storage error, when the file shrinks mid-part', async () => {
    const file = hashedFile('shrunk.bin', randomBytes(512 * 1024))
    const failed = await failure(file, {
      onEvent: (event) => {
        if (event.type === 'state' && event.state === 'uploading') truncateSync(file.path, 1000)
      },
    })

    expect(failed.error.code).toBe('FILE_CHANGED')
    expect(failed.puts).toHaveLength(1)
  })

  it('fails with FILE_CHANGED when the bytes sent do not match the hash', async () => {
    const file = hashedFile('misshashed.bin', randomBytes(100 * 1024))
    databases.ledger.uploads.setHash(file.row.seq, 'a'.repeat(64), 'application/octet-stream')
    const failed = await failure(file)

    expect(failed.error.code).toBe('FILE_CHANGED')
    expect(failed.puts).toHaveLength(1)
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'failed', assetId: null })
  })

  it('fails with UPLOAD_REFUSED and the service message when the service refuses the upload', async () => {
    const file = hashedFile('odd.bin', randomBytes(1000), 'not a content type')
    const failed = await failure(file)

    expect(failed.error.code).toBe('UPLOAD_REFUSED')
    expect(failed.error.status).toBeGreaterThanOrEqual(400)
    expect(failed.error.status).toBeLessThan(500)
    expect(failed.error.serviceMessage).toMatch(/content_type/)
    expect(failed.error.message).toContain(failed.error.serviceMessage)
    expect(failed.puts).toHaveLength(0)
    expect(rowOf(file.row.seq)).toMatchObject({ state: 'failed' })
  })

  it('sends bytes it is given from memory, recording their hash with the upload', async () => {
    const bytes = randomBytes(200 * 1024)
    const path = join(dir, 'held.bin')
    writeFileSync(path, bytes)
    const { size, mtimeMs } = statSync(path)
    const { uploads } = databases.ledger
    uploads.addFiles(manifestId, [
      { relativePath: 'held.bin', sizeBytes: size, mtimeMs: Math.floor(mtimeMs) },
    ])
    const listed = uploads
      .files(manifestId, { limit: 1000 })
      .items.find((f) => f.relativePath === 'held.bin')
    if (!listed) throw new Error('held.bin was not listed')
    const hash = { sha256: sha256(bytes), contentType: 'application/octet-stream' }
    const file: TransferFile = { row: listed, path, folderId: null, filename: 'held.bin', bytes }

    // The ledger has no hash for it: the caller's copy of the row must carry one.
    const unready = await failure(file)
    expect(unready.error.code).toBe('FILE_NOT_READY')
    expect(unready.puts).toHaveLength(0)

    // Rewritten on disk after it was read: what goes is what was read and hashed.
    writeFileSync(path, randomBytes(bytes.length))
    const sent = await send({ ...file, row: { ...listed, ...hash } })
    expect(sent.result).toMatchObject({ state: 'confirmed', partsSent: 1, bytesSent: bytes.length })
    expect(states(sent.events)).toEqual(['declaring', 'uploading', 'confirming', 'done'])
    expect(sent.puts.map((put) => [put.status, put.bytes])).toEqual([[200, bytes.length]])
    expect(await storedSha256(sent.result.assetId)).toBe(hash.sha256)
    expect(rowOf(listed.seq)).toMatchObject({ state: 'confirmed', ...hash })
    // Its part is not recorded on its own: the service's account of the upload would say.
    expect(uploads.finishedParts(listed.seq)).toEqual([])
  })

  it('starts a new upload when the remembered one expired on the service', async () => {
    const bytes = randomBytes(20 * MiB)
    const file = hashedFile('expired.bin', bytes)
    const controller = new AbortController()
    await failure(file, {
      limiter: createPartLimiter(1),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'part') controller.abort()
      },
    })
    const first = rowOf(file.row.seq).uploadId
    expect(databases.ledger.uploads.finishedParts(file.row.seq)).toHaveLength(1)

    clockOffsetMs += 25 * 60 * 60 * 1000
    const sent = await send(file)
    expect(sent.result).toMatchObject({ state: 'confirmed', partsSent: 3 })
    expect(sent.puts).toHaveLength(3)
    expect(states(sent.events).slice(0, 2)).toEqual(['resuming', 'declaring'])
    const row = rowOf(file.row.seq)
    expect(row.uploadId).not.toBe(first)
    expect(databases.ledger.uploads.finishedParts(file.row.seq)).toHaveLength(3)
    expect(await storedSha256(sent.result.assetId)).toBe(sha256(bytes))
  })
})
