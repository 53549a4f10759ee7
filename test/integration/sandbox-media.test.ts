import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { dirname, join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { components } from '../../src-shared/api'
import { createMediaArea } from '../../src-main/sandbox/media'
import { createServiceClient, ServiceError, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

type Asset = components['schemas']['Asset']
type AssetFolder = components['schemas']['AssetFolder']
type AssetUpload = components['schemas']['AssetUpload']
type Page<T> = { items: T[] }

const MiB = 1024 * 1024

let sandbox: TestSandbox
let client: ServiceClient
/** A second sandbox whose clock the tests move, for the expiry rules. */
let timed: TestSandbox
let clockOffset = 0

beforeAll(async () => {
  sandbox = await startTestSandbox()
  timed = await startTestSandbox({ clock: () => Date.now() + clockOffset })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
})

afterAll(async () => {
  await sandbox.close()
  await timed.close()
})

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

async function pngOf(width: number, height: number, seed: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3)
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * seed + (i >> 7)) % 251
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer()
}

/** Step 2 as a client does it: a plain PUT of the raw bytes, no API key. */
async function putPart(
  url: string,
  bytes: Buffer,
): Promise<{ status: number; etag: string; body: string }> {
  const response = await fetch(url, {
    method: 'PUT',
    body: bytes,
    headers: { 'Content-Type': 'application/octet-stream' },
  })
  return {
    status: response.status,
    etag: response.headers.get('etag') ?? '',
    body: await response.text(),
  }
}

async function start(
  on: TestSandbox,
  body: Record<string, unknown>,
  key?: string,
): Promise<{ status: number; upload: AssetUpload; raw: unknown }> {
  const response = await on.call('POST', '/v1/asset-uploads', { body, ...(key ? { key } : {}) })
  return { status: response.status, upload: response.body as AssetUpload, raw: response.body }
}

/** Every part of `bytes` PUT to its URL; answers the confirmation's part list. */
async function sendParts(
  upload: AssetUpload,
  bytes: Buffer,
): Promise<{ part_number: number; etag: string }[]> {
  const listed = []
  for (const part of upload.parts) {
    const from = (part.part_number - 1) * upload.part_size
    const sent = await putPart(part.url, bytes.subarray(from, from + upload.part_size))
    expect(sent.status).toBe(200)
    listed.push({ part_number: part.part_number, etag: sent.etag })
  }
  return listed
}

async function uploadFile(
  bytes: Buffer,
  filename: string,
  contentType: string,
  extra: Record<string, unknown> = {},
  on: TestSandbox = sandbox,
  key?: string,
): Promise<Asset> {
  const { status, upload } = await start(
    on,
    {
      filename,
      content_type: contentType,
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      ...extra,
    },
    key,
  )
  expect(status).toBe(201)
  const parts = await sendParts(upload, bytes)
  const confirmed = await on.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
    body: { parts },
    ...(key ? { key } : {}),
  })
  expect(confirmed.status).toBe(201)
  return confirmed.body as Asset
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  return Buffer.from(await response.arrayBuffer())
}

function stagedFilesOf(on: TestSandbox, uploadId: string): string[] {
  const folder = dirname(on.services.blobs.stagingPath('probe'))
  return readdirSync(folder).filter((name) => name.includes(uploadId))
}

describe('media: presigned uploads', () => {
  let image: Buffer
  let imageAsset: Asset

  it('uploads a real image in one part, confirms it and serves the same bytes with a thumbnail', async () => {
    image = await pngOf(640, 480, 7)
    const upload = await client.post('/v1/asset-uploads', {
      body: {
        filename: 'renders/fox in the snow.png',
        content_type: 'image/png',
        size_bytes: image.length,
        sha256: sha256(image),
      },
    })
    expect(upload).toMatchObject({
      status_code: 'pending',
      part_size: 8 * MiB,
      part_count: 1,
      asset_id: null,
      duplicate_of_asset_id: null,
    })
    expect(upload.parts).toEqual([
      {
        part_number: 1,
        url: expect.any(String),
        expires_at: expect.any(String),
        received: false,
        etag: null,
      },
    ])
    // Part URLs need no key: a request with one is not sent here, but none is needed.
    const sent = await putPart(upload.parts[0]?.url ?? '', image)
    expect(sent.status).toBe(200)
    expect(sent.etag).toBe(`"${createHash('md5').update(image).digest('hex')}"`)

    const progress = await client.get('/v1/asset-uploads/{upload_id}', {
      params: { path: { upload_id: upload.id } },
    })
    expect(progress.status_code).toBe('uploading')
    expect(progress.parts[0]).toMatchObject({ received: true, etag: sent.etag })

    imageAsset = await client.post('/v1/asset-uploads/{upload_id}/confirmations', {
      params: { path: { upload_id: upload.id } },
      body: { parts: [{ part_number: 1, etag: sent.etag }] },
    })
    expect(imageAsset).toMatchObject({
      org_id: sandbox.orgId,
      folder_id: null,
      name: 'fox in the snow.png',
      media_type: 'image',
      content_type: 'image/png',
      size_bytes: image.length,
      sha256: sha256(image),
      width: 640,
      height: 480,
      duration_ms: null,
      status_code: 'ready',
      deleted_at: null,
    })
    expect(Date.parse(imageAsset.url_expires_at ?? '')).toBeGreaterThan(Date.now())
    expect(await download(imageAsset.url ?? '')).toEqual(image)

    const thumbnail = await download(imageAsset.thumbnail_url ?? '')
    const metadata = await sharp(thumbnail).metadata()
    expect(metadata.format).toBe('webp')
    expect(Math.max(metadata.width, metadata.height)).toBeLessThanOrEqual(256)
    expect(metadata.width / metadata.height).toBeCloseTo(640 / 480, 1)
    expect(thumbnail.length).toBeLessThan(image.length)
    expect(stagedFilesOf(sandbox, upload.id)).toEqual([])

    // Every read carries a working URL.
    const again = await client.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: imageAsset.id } },
    })
    expect(await download(again.url ?? '')).toEqual(image)
    const finished = await client.get('/v1/asset-uploads/{upload_id}', {
      params: { path: { upload_id: upload.id } },
    })
    expect(finished).toMatchObject({ status_code: 'confirmed', asset_id: imageAsset.id })
  })

  it('uploads a 20 MiB file in 5 MiB parts; a part sent twice is harmless; confirming twice answers the same asset', async () => {
    const bytes = randomBytes(20 * MiB + 12_345)
    // Random bytes can begin like a media file (an ADTS audio header is 12 bits of ones): a
    // text prefix keeps the content sniffer's answer what this test expects, every time.
    bytes.write('noise, not media\n', 0, 'latin1')
    const { status, upload } = await start(sandbox, {
      filename: 'noise.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      part_size: 5 * MiB,
    })
    expect(status).toBe(201)
    expect(upload.part_count).toBe(5)
    const parts = await sendParts(upload, bytes)
    const again = await putPart(upload.parts[1]?.url ?? '', bytes.subarray(5 * MiB, 10 * MiB))
    expect(again).toMatchObject({ status: 200, etag: parts[1]?.etag })

    const confirm = () =>
      sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, { body: { parts } })
    const first = await confirm()
    expect(first.status).toBe(201)
    const asset = first.body as Asset
    expect(asset).toMatchObject({
      media_type: 'other',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      thumbnail_url: null,
    })
    const downloaded = await download(asset.url ?? '')
    expect(sha256(downloaded)).toBe(sha256(bytes))
    expect(downloaded.equals(bytes)).toBe(true)

    const second = await confirm()
    expect(second.status).toBe(200)
    expect((second.body as Asset).id).toBe(asset.id)
    // The store's own view, which the evaluations area relies on: the record and its bytes.
    expect(sandbox.services.blobs.size(asset.sha256)).toBe(bytes.length)
    // A confirmed upload takes no more parts.
    const late = await putPart(upload.parts[0]?.url ?? '', bytes.subarray(0, 5 * MiB))
    expect(late.status).toBe(409)
  })

  it('answers a duplicate with 200, no parts and the existing asset: zero bytes to send', async () => {
    const { status, upload } = await start(sandbox, {
      filename: 'same fox.png',
      content_type: 'image/png',
      size_bytes: image.length,
      sha256: sha256(image),
    })
    expect(status).toBe(200)
    expect(upload).toMatchObject({
      status_code: 'duplicate',
      duplicate_of_asset_id: imageAsset.id,
      part_count: 0,
      parts: [],
      asset_id: null,
    })
    const read = await sandbox.call('GET', `/v1/asset-uploads/${upload.id}`)
    expect(read.body).toMatchObject({ status_code: 'duplicate' })
  })

  it('ends two simultaneous uploads of the same bytes with one asset', async () => {
    const bytes = await pngOf(64, 48, 3)
    const declare = {
      filename: 'twin.png',
      content_type: 'image/png',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
    }
    const a = await start(sandbox, declare)
    const b = await start(sandbox, declare)
    expect([a.status, b.status]).toEqual([201, 201])
    const partsA = await sendParts(a.upload, bytes)
    const partsB = await sendParts(b.upload, bytes)
    const [first, second] = await Promise.all([
      sandbox.call('POST', `/v1/asset-uploads/${a.upload.id}/confirmations`, {
        body: { parts: partsA },
      }),
      sandbox.call('POST', `/v1/asset-uploads/${b.upload.id}/confirmations`, {
        body: { parts: partsB },
      }),
    ])
    expect([first.status, second.status].sort()).toEqual([200, 201])
    expect((first.body as Asset).id).toBe((second.body as Asset).id)
    const listed = await sandbox.call(
      'GET',
      `/v1/assets?q=${encodeURIComponent(`sha256=${sha256(bytes)}`)}`,
    )
    expect((listed.body as Page<Asset>).items).toHaveLength(1)
    const loser = first.status === 200 ? a.upload : b.upload
    const read = await sandbox.call('GET', `/v1/asset-uploads/${loser.id}`)
    expect(read.body).toMatchObject({
      status_code: 'duplicate',
      duplicate_of_asset_id: (first.body as Asset).id,
    })
  })

  it('refuses to confirm with a part missing or a wrong ETag: 409 UPLOAD_INCOMPLETE naming the parts', async () => {
    const bytes = randomBytes(2 * MiB + 10)
    const { upload } = await start(sandbox, {
      filename: 'gappy.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      part_size: MiB,
    })
    expect(upload.part_count).toBe(3)
    const one = await putPart(upload.parts[0]?.url ?? '', bytes.subarray(0, MiB))
    const three = await putPart(upload.parts[2]?.url ?? '', bytes.subarray(2 * MiB))
    const parts = [
      { part_number: 1, etag: one.etag },
      { part_number: 2, etag: '"0123"' },
      { part_number: 3, etag: three.etag },
    ]
    const confirm = (body: unknown) =>
      sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, { body })
    const missing = await confirm({ parts })
    expect(missing.status).toBe(409)
    expect(missing.body).toMatchObject({
      code: 'UPLOAD_INCOMPLETE',
      message: expect.stringContaining('part(s) 2:'),
    })

    const two = await putPart(upload.parts[1]?.url ?? '', bytes.subarray(MiB, 2 * MiB))
    const wrongEtag = await confirm({ parts })
    expect(wrongEtag.body).toMatchObject({
      code: 'UPLOAD_INCOMPLETE',
      message: expect.stringContaining('ETag(s) of part(s) 2'),
    })
    const leftOut = await confirm({ parts: [parts[0], parts[2]] })
    expect(leftOut.body).toMatchObject({
      code: 'UPLOAD_INCOMPLETE',
      message: expect.stringContaining('leaves out part(s) 2'),
    })
    const beyond = await confirm({ parts: [...parts, { part_number: 4, etag: 'x' }] })
    expect(beyond.status).toBe(422)

    // ETags without their quotes are the same ETags.
    const bare = parts.map((part) =>
      part.part_number === 2 ? { part_number: 2, etag: two.etag.replaceAll('"', '') } : part,
    )
    expect((await confirm({ parts: bare })).status).toBe(201)
  })

  it('refuses a part of the wrong size with 400 and keeps the upload usable', async () => {
    const bytes = randomBytes(MiB + 1)
    const { upload } = await start(sandbox, {
      filename: 'sized.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      part_size: MiB,
    })
    const short = await putPart(upload.parts[0]?.url ?? '', bytes.subarray(0, MiB - 1))
    expect(short.status).toBe(400)
    expect(JSON.parse(short.body)).toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('exactly 1048576 bytes'),
    })
    const long = await putPart(upload.parts[1]?.url ?? '', bytes.subarray(0, 2))
    expect(long.status).toBe(400)
    const parts = await sendParts(upload, bytes)
    const confirmed = await sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts },
    })
    expect(confirmed.status).toBe(201)
  })

  it('answers 422 when the bytes do not match the declared sha256, and accepts the right bytes after', async () => {
    const bytes = randomBytes(300_000)
    const { upload } = await start(sandbox, {
      filename: 'checked.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
    })
    const wrong = Buffer.from(bytes)
    wrong[1000] = (wrong[1000] ?? 0) ^ 0xff
    const sent = await putPart(upload.parts[0]?.url ?? '', wrong)
    const mismatch = await sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts: [{ part_number: 1, etag: sent.etag }] },
    })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ field: 'sha256' })],
    })

    const right = await putPart(upload.parts[0]?.url ?? '', bytes)
    const confirmed = await sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts: [{ part_number: 1, etag: right.etag }] },
    })
    expect(confirmed.status).toBe(201)
  })

  it('answers 403 SIGNATURE_INVALID to a tampered part URL, as object storage does', async () => {
    const bytes = randomBytes(1000)
    const { upload } = await start(sandbox, {
      filename: 'tamper.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
    })
    const url = new URL(upload.parts[0]?.url ?? '')
    const signature = url.searchParams.get('signature') ?? ''
    url.searchParams.set(
      'signature',
      `${signature.startsWith('0') ? '1' : '0'}${signature.slice(1)}`,
    )
    const tampered = await putPart(url.href, bytes)
    expect(tampered.status).toBe(403)
    expect(JSON.parse(tampered.body)).toMatchObject({
      code: 'SIGNATURE_INVALID',
      message: expect.any(String),
    })
    const later = new URL(upload.parts[0]?.url ?? '')
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600))
    expect((await putPart(later.href, bytes)).status).toBe(403)
    const otherPart = (upload.parts[0]?.url ?? '').replace('/parts/1?', '/parts/2?')
    expect((await putPart(otherPart, bytes)).status).toBe(403)
  })

  it('validates the declaration: part size bounds, size limit, folder', async () => {
    const base = {
      filename: 'x.bin',
      content_type: 'application/octet-stream',
      size_bytes: 10,
      sha256: 'a'.repeat(64),
    }
    expect((await start(sandbox, { ...base, part_size: MiB - 1 })).status).toBe(422)
    expect((await start(sandbox, { ...base, part_size: 64 * MiB + 1 })).status).toBe(422)
    expect((await start(sandbox, { ...base, size_bytes: 5 * 1024 * MiB + 1 })).status).toBe(422)
    const folder = await start(sandbox, {
      ...base,
      folder_id: '0190a000-0000-7000-8000-000000000000',
    })
    expect(folder.status).toBe(409)
    const huge = await start(sandbox, { ...base, size_bytes: 5 * 1024 * MiB, part_size: 64 * MiB })
    expect(huge.upload.part_count).toBe(80)
  })

  it('stores an empty file as one empty part', async () => {
    const asset = await uploadFile(Buffer.alloc(0), 'empty.txt', 'text/plain')
    expect(asset).toMatchObject({ size_bytes: 0, media_type: 'other', content_type: 'text/plain' })
    expect((await download(asset.url ?? '')).length).toBe(0)
  })
})

describe('media: expiry', () => {
  it('answers 403 URL_EXPIRED once a part URL has expired; fresh URLs from refresh work', async () => {
    const bytes = await pngOf(32, 32, 11)
    const { upload } = await start(timed, {
      filename: 'slow.png',
      content_type: 'image/png',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
    })
    const first = upload.parts[0]
    expect(Date.parse(first?.expires_at ?? '') - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000)
    clockOffset += 16 * 60 * 1000
    const expired = await putPart(first?.url ?? '', bytes)
    expect(expired.status).toBe(403)
    expect(JSON.parse(expired.body)).toMatchObject({ code: 'URL_EXPIRED' })

    const refreshed = await timed.call('POST', `/v1/asset-uploads/${upload.id}/parts`, {
      body: { part_numbers: [1] },
    })
    expect(refreshed.status).toBe(200)
    const part = (refreshed.body as AssetUpload).parts[0]
    expect(part?.url).not.toBe(first?.url)
    expect(Date.parse(part?.expires_at ?? '')).toBeGreaterThan(Date.now() + clockOffset)
    const sent = await putPart(part?.url ?? '', bytes)
    expect(sent.status).toBe(200)
    const outside = await timed.call('POST', `/v1/asset-uploads/${upload.id}/parts`, {
      body: { part_numbers: [2] },
    })
    expect(outside.status).toBe(422)
    const confirmed = await timed.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts: [{ part_number: 1, etag: sent.etag }] },
    })
    expect(confirmed.status).toBe(201)
    // Asset URLs follow the same clock: fresh on every read, dead after their hour.
    const asset = confirmed.body as Asset
    clockOffset += 2 * 60 * 60 * 1000
    expect((await fetch(asset.url ?? '')).status).toBe(403)
    const reread = await timed.call('GET', `/v1/assets/${asset.id}`)
    expect((await fetch((reread.body as Asset).url ?? '')).status).toBe(200)
  })

  it('expires an upload not confirmed in time: 409 UPLOAD_EXPIRED, staged parts removed', async () => {
    const bytes = randomBytes(MiB + 5)
    const { upload } = await start(timed, {
      filename: 'abandoned.bin',
      content_type: 'application/octet-stream',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      part_size: MiB,
    })
    const sent = await putPart(upload.parts[0]?.url ?? '', bytes.subarray(0, MiB))
    expect(sent.status).toBe(200)
    expect(stagedFilesOf(timed, upload.id)).toHaveLength(1)
    clockOffset += 25 * 60 * 60 * 1000

    const read = await timed.call('GET', `/v1/asset-uploads/${upload.id}`)
    expect(read.body).toMatchObject({ status_code: 'expired' })
    expect(stagedFilesOf(timed, upload.id)).toEqual([])
    const refresh = await timed.call('POST', `/v1/asset-uploads/${upload.id}/parts`, {
      body: { part_numbers: [2] },
    })
    expect(refresh.status).toBe(409)
    expect(refresh.body).toMatchObject({ code: 'UPLOAD_EXPIRED' })
    const confirm = await timed.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts: [{ part_number: 1, etag: sent.etag }] },
    })
    expect(confirm.status).toBe(409)
    expect(confirm.body).toMatchObject({ code: 'UPLOAD_EXPIRED' })
  })
  it('sweeps expired uploads on a timer that stops with the area', async () => {
    const area = createMediaArea(timed.services, { sweepIntervalMs: 20 })
    try {
      const bytes = randomBytes(MiB + 1)
      const { upload } = await start(timed, {
        filename: 'forgotten.bin',
        content_type: 'application/octet-stream',
        size_bytes: bytes.length,
        sha256: sha256(bytes),
        part_size: MiB,
      })
      expect((await putPart(upload.parts[0]?.url ?? '', bytes.subarray(0, MiB))).status).toBe(200)
      clockOffset += 25 * 60 * 60 * 1000
      const stored = () =>
        timed.services.store.get<AssetUpload>('asset_uploads', upload.id, timed.orgId)
      for (let attempt = 0; attempt < 100 && stored()?.status_code !== 'expired'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(stored()?.status_code).toBe('expired')
      expect(stagedFilesOf(timed, upload.id)).toEqual([])
    } finally {
      await area.stop?.()
    }
  })
})

describe('media: folders', () => {
  const create = async (name: string, parentId: string | null = null) =>
    client.post('/v1/asset-folders', { body: { name, parent_id: parentId } })

  it('keeps nested paths right through create, rename and move', async () => {
    const projects = await create('Projects')
    const fox = await create('Fox', projects.id)
    const renders = await create('Renders', fox.id)
    expect([projects.path, fox.path, renders.path]).toEqual([
      '/Projects',
      '/Projects/Fox',
      '/Projects/Fox/Renders',
    ])
    expect(renders).toMatchObject({ parent_id: fox.id, org_id: sandbox.orgId, deleted_at: null })

    const archive = await create('Archive', projects.id)
    const moved = await client.patch('/v1/asset-folders/{id}', {
      params: { path: { id: fox.id } },
      body: { parent_id: archive.id, name: 'Fox 2026' },
    })
    expect(moved).toMatchObject({ path: '/Projects/Archive/Fox 2026', parent_id: archive.id })
    const child = await client.get('/v1/asset-folders/{id}', {
      params: { path: { id: renders.id } },
    })
    expect(child.path).toBe('/Projects/Archive/Fox 2026/Renders')
    expect(child.updated_at > renders.updated_at).toBe(true)

    const renamed = await client.patch('/v1/asset-folders/{id}', {
      params: { path: { id: projects.id } },
      body: { name: 'Work' },
    })
    expect(renamed.path).toBe('/Work')
    const all = await sandbox.call(
      'GET',
      `/v1/asset-folders?q=${encodeURIComponent('path~"/Work/"')}&sort_by=path:asc`,
    )
    expect((all.body as Page<AssetFolder>).items.map((f) => f.path)).toEqual([
      '/Work/Archive',
      '/Work/Archive/Fox 2026',
      '/Work/Archive/Fox 2026/Renders',
    ])
    const atRoot = await client.patch('/v1/asset-folders/{id}', {
      params: { path: { id: renders.id } },
      body: { parent_id: null },
    })
    expect(atRoot).toMatchObject({ path: '/Renders', parent_id: null })
    const topLevel = await sandbox.call(
      'GET',
      `/v1/asset-folders?q=${encodeURIComponent('parent_id=null and name=Renders')}`,
    )
    expect((topLevel.body as Page<AssetFolder>).items.map((f) => f.id)).toEqual([renders.id])
  })

  it('keeps sibling names unique (ignoring case) and refuses a move into its own subtree', async () => {
    const top = await create('Clash')
    const a = await create('Alpha', top.id)
    await create('Beta', top.id)
    const inner = await create('Inner', a.id)
    const again = await sandbox.call('POST', '/v1/asset-folders', {
      body: { name: 'alpha', parent_id: top.id },
    })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('Alpha'),
    })
    const rename = await sandbox.call('PATCH', `/v1/asset-folders/${a.id}`, {
      body: { name: 'BETA' },
    })
    expect(rename.status).toBe(409)
    const sameCase = await sandbox.call('PATCH', `/v1/asset-folders/${a.id}`, {
      body: { name: 'ALPHA' },
    })
    expect(sameCase.status).toBe(200)
    const intoSelf = await sandbox.call('PATCH', `/v1/asset-folders/${a.id}`, {
      body: { parent_id: inner.id },
    })
    expect(intoSelf.status).toBe(409)
    const itself = await sandbox.call('PATCH', `/v1/asset-folders/${a.id}`, {
      body: { parent_id: a.id },
    })
    expect(itself.status).toBe(409)
    const dots = await sandbox.call('POST', '/v1/asset-folders', { body: { name: '..' } })
    expect(dots.status).toBe(422)
    const slash = await sandbox.call('POST', '/v1/asset-folders', { body: { name: 'a/b' } })
    expect(slash.status).toBe(422)
    const empty = await sandbox.call('PATCH', `/v1/asset-folders/${a.id}`, { body: {} })
    expect(empty.status).toBe(422)
  })

  it('soft-deletes an empty folder: gone from reads and lists, a tombstone published; refuses a non-empty one', async () => {
    const parent = await create('Doomed')
    const child = await create('Leaf', parent.id)
    const busy = await sandbox.call('DELETE', `/v1/asset-folders/${parent.id}`)
    expect(busy.status).toBe(409)
    expect(busy.body).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('1 folder(s)'),
    })

    const deleted = await sandbox.call('DELETE', `/v1/asset-folders/${child.id}`)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toMatchObject({ id: child.id, deleted_at: expect.any(String) })
    expect((await sandbox.call('GET', `/v1/asset-folders/${child.id}`)).status).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/asset-folders/${child.id}`)).status).toBe(404)
    const listed = await sandbox.call(
      'GET',
      `/v1/asset-folders?q=${encodeURIComponent(`parent_id=${parent.id}`)}`,
    )
    expect((listed.body as Page<AssetFolder>).items).toEqual([])
    const tombstones = await sandbox.call(
      'GET',
      `/v1/tombstones?q=${encodeURIComponent(`record_id=${child.id}`)}`,
    )
    expect((tombstones.body as Page<unknown>).items).toEqual([
      expect.objectContaining({ collection: 'asset_folders', record_id: child.id }),
    ])
    // The name is free again, and the parent is empty now.
    expect(
      (
        await sandbox.call('POST', '/v1/asset-folders', {
          body: { name: 'Leaf', parent_id: parent.id },
        })
      ).status,
    ).toBe(201)
    const into = await sandbox.call('POST', '/v1/asset-folders', {
      body: { name: 'Under', parent_id: child.id },
    })
    expect(into.status).toBe(409)
  })
})

describe('media: assets', () => {
  it('renames and moves assets, refuses deleted or foreign folders, deletes with a tombstone', async () => {
    const folder = await client.post('/v1/asset-folders', { body: { name: 'Inbox' } })
    const bytes = await pngOf(40, 30, 5)
    const asset = await uploadFile(bytes, 'move me.png', 'image/png', { folder_id: folder.id })
    expect(asset.folder_id).toBe(folder.id)
    const inFolder = await sandbox.call(
      'GET',
      `/v1/assets?q=${encodeURIComponent(`folder_id=${folder.id}`)}`,
    )
    expect((inFolder.body as Page<Asset>).items.map((a) => a.id)).toEqual([asset.id])
    const busy = await sandbox.call('DELETE', `/v1/asset-folders/${folder.id}`)
    expect(busy.status).toBe(409)

    const renamed = await client.patch('/v1/assets/{asset_id}', {
      params: { path: { asset_id: asset.id } },
      body: { name: 'moved.png', folder_id: null },
    })
    expect(renamed).toMatchObject({ name: 'moved.png', folder_id: null, url: expect.any(String) })
    expect(await download(renamed.url ?? '')).toEqual(bytes)
    expect((await sandbox.call('DELETE', `/v1/asset-folders/${folder.id}`)).status).toBe(200)
    const intoDeleted = await sandbox.call('PATCH', `/v1/assets/${asset.id}`, {
      body: { folder_id: folder.id },
    })
    expect(intoDeleted.status).toBe(409)
    const foreign = await sandbox.call('POST', '/v1/asset-folders', {
      key: sandbox.keys.otherOrg,
      body: { name: 'Theirs' },
    })
    const intoForeign = await sandbox.call('PATCH', `/v1/assets/${asset.id}`, {
      body: { folder_id: (foreign.body as AssetFolder).id },
    })
    expect(intoForeign.status).toBe(409)
    const blank = await sandbox.call('PATCH', `/v1/assets/${asset.id}`, { body: { name: '   ' } })
    expect(blank.status).toBe(422)

    const deleted = await sandbox.call('DELETE', `/v1/assets/${asset.id}`)
    expect(deleted.status).toBe(204)
    expect((await sandbox.call('GET', `/v1/assets/${asset.id}`)).status).toBe(404)
    const error = await client
      .get('/v1/assets/{asset_id}', { params: { path: { asset_id: asset.id } } })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' })
    const tombstones = await sandbox.call(
      'GET',
      `/v1/tombstones?q=${encodeURIComponent(`record_id=${asset.id}`)}`,
    )
    expect((tombstones.body as Page<unknown>).items).toEqual([
      expect.objectContaining({ collection: 'assets', record_id: asset.id }),
    ])
    // Deleted bytes are no duplicate: the same file uploads afresh.
    const fresh = await start(sandbox, {
      filename: 'back.png',
      content_type: 'image/png',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
    })
    expect(fresh.status).toBe(201)
  })

  it('puts the asset of an upload whose folder was deleted meanwhile at the root', async () => {
    const folder = await client.post('/v1/asset-folders', { body: { name: 'Short-lived' } })
    const bytes = await pngOf(24, 24, 19)
    const { upload } = await start(sandbox, {
      filename: 'orphan.png',
      content_type: 'image/png',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      folder_id: folder.id,
    })
    expect(upload.folder_id).toBe(folder.id)
    expect((await sandbox.call('DELETE', `/v1/asset-folders/${folder.id}`)).status).toBe(200)
    const parts = await sendParts(upload, bytes)
    const confirmed = await sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
      body: { parts },
    })
    expect(confirmed.status).toBe(201)
    expect(confirmed.body).toMatchObject({ folder_id: null, name: 'orphan.png' })
  })

  it('searches assets with q and keeps URLs fresh in lists, also under a projection', async () => {
    const big = randomBytes(3 * MiB)
    await uploadFile(big, 'Big Fox Archive.bin', 'application/octet-stream', { part_size: 2 * MiB })
    await uploadFile(await pngOf(50, 50, 13), 'red fox portrait.png', 'image/png')
    const search = async (q: string, extra = '') => {
      const response = await sandbox.call('GET', `/v1/assets?q=${encodeURIComponent(q)}${extra}`)
      expect(response.status).toBe(200)
      return (response.body as Page<Asset>).items
    }
    const foxes = await search('name~"fox"')
    expect(foxes.map((a) => a.name)).toEqual(
      expect.arrayContaining(['Big Fox Archive.bin', 'red fox portrait.png']),
    )
    const images = await search('name~fox and media_type=image')
    expect(images.map((a) => a.name)).toContain('red fox portrait.png')
    expect(images.every((a) => a.media_type === 'image')).toBe(true)
    const large = await search('size_bytes>2000000')
    expect(large.map((a) => a.name)).toContain('Big Fox Archive.bin')
    expect(large.every((a) => a.size_bytes > 2_000_000)).toBe(true)
    for (const asset of foxes) expect((await fetch(asset.url ?? '')).status).toBe(200)

    const projected = await search('name~"red fox"', '&fields=name,url,thumbnail_url')
    expect(projected).toHaveLength(1)
    expect(Object.keys(projected[0] ?? {}).sort()).toEqual(['id', 'name', 'thumbnail_url', 'url'])
    expect((await fetch(projected[0]?.url ?? '')).status).toBe(200)
    expect((await fetch(projected[0]?.thumbnail_url ?? '')).status).toBe(200)

    const all: string[] = []
    for await (const asset of client.list('/v1/assets', {
      params: { query: { q: 'name~fox', limit: 1 } },
    })) {
      all.push(asset.name)
    }
    expect(all.length).toBe(foxes.length)
  })

  it('shows another organization none of it', async () => {
    const bytes = await pngOf(20, 20, 17)
    const mine = await uploadFile(bytes, 'private.png', 'image/png')
    const other = { key: sandbox.keys.otherOrg }
    expect((await sandbox.call('GET', `/v1/assets/${mine.id}`, other)).status).toBe(404)
    expect(
      (await sandbox.call('PATCH', `/v1/assets/${mine.id}`, { ...other, body: { name: 'x' } }))
        .status,
    ).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/assets/${mine.id}`, other)).status).toBe(404)
    const theirList = await sandbox.call('GET', '/v1/assets', other)
    expect(
      (theirList.body as Page<Asset>).items.every((a) => a.org_id === sandbox.otherOrgId),
    ).toBe(true)
    const folders = await sandbox.call('GET', '/v1/asset-folders', other)
    expect(
      (folders.body as Page<AssetFolder>).items.every((f) => f.org_id === sandbox.otherOrgId),
    ).toBe(true)
    // The same bytes are no duplicate across organizations.
    const theirs = await start(
      sandbox,
      {
        filename: 'p.png',
        content_type: 'image/png',
        size_bytes: bytes.length,
        sha256: sha256(bytes),
      },
      sandbox.keys.otherOrg,
    )
    expect(theirs.status).toBe(201)
    expect((await sandbox.call('GET', `/v1/asset-uploads/${theirs.upload.id}`)).status).toBe(404)
    const upload = (await sandbox.call('GET', `/v1/asset-uploads/${theirs.upload.id}`, other))
      .body as AssetUpload
    expect(upload.org_id).toBe(sandbox.otherOrgId)
    const confirmForeign = await sandbox.call(
      'POST',
      `/v1/asset-uploads/${theirs.upload.id}/confirmations`,
      {
        body: { parts: [{ part_number: 1, etag: 'x' }] },
      },
    )
    expect(confirmForeign.status).toBe(404)
  })
})

describe('media: bounded memory', () => {
  const PART_MIB = 64

  /** 64 MiB of content that differs per round, made 1 MiB at a time into the same buffer. */
  function contentOf(round: number) {
    const seed = randomBytes(MiB)
    const fill = (block: Buffer, index: number) => {
      seed.copy(block)
      block.writeUInt32BE(index, 0)
      block.writeUInt32BE(round, 4)
    }
    const hash = createHash('sha256')
    const block = Buffer.alloc(MiB)
    for (let i = 0; i < PART_MIB; i++) {
      fill(block, i)
      hash.update(block)
    }
    return { fill, sha256: hash.digest('hex') }
  }

  /**
   * PUTs the part through node:http, reusing one 1 MiB buffer, so the test holds none of it;
   * `halfway` runs once half the part has left, before the rest is sent.
   */
  function streamPart(
    url: string,
    fill: (block: Buffer, index: number) => void,
    halfway: () => Promise<void>,
  ): Promise<{ status: number; etag: string }> {
    return new Promise((resolve, reject) => {
      const block = Buffer.alloc(MiB)
      const req = httpRequest(
        url,
        { method: 'PUT', headers: { 'Content-Length': String(PART_MIB * MiB) } },
        (response) => {
          response.resume()
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, etag: response.headers.etag ?? '' })
          })
        },
      )
      req.on('error', reject)
      let index = 0
      const next = (): void => {
        if (index === PART_MIB) {
          req.end()
          return
        }
        fill(block, index)
        index++
        // The callback runs once the bytes are flushed, so the buffer may be refilled then.
        req.write(block, (error) => {
          if (error) reject(error)
          else if (index === PART_MIB / 2) halfway().then(next, reject)
          else next()
        })
      }
      next()
    })
  }

  /** The size of the part being written to staging, once it reaches `atLeast` (or 0 after 5 s). */
  async function stagedBytes(uploadId: string, atLeast: number): Promise<number> {
    const folder = dirname(sandbox.services.blobs.stagingPath('probe'))
    let largest = 0
    for (let attempt = 0; attempt < 100 && largest < atLeast; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      for (const name of readdirSync(folder)) {
        if (name.includes(uploadId)) largest = Math.max(largest, statSync(join(folder, name)).size)
      }
    }
    return largest
  }

  /** One whole upload of a 64 MiB part; answers the growth of rss at its peak. */
  async function uploadLargePart(round: number): Promise<{ growth: number; midway: number }> {
    const { fill, sha256: digest } = contentOf(round)
    const { upload } = await start(sandbox, {
      filename: `large-${round}.bin`,
      content_type: 'application/octet-stream',
      size_bytes: PART_MIB * MiB,
      sha256: digest,
      part_size: PART_MIB * MiB,
    })
    const baseline = process.memoryUsage().rss
    let peak = baseline
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 10)
    let midway = 0
    try {
      const sent = await streamPart(upload.parts[0]?.url ?? '', fill, async () => {
        midway = await stagedBytes(upload.id, 16 * MiB)
      })
      expect(sent.status).toBe(200)
      const confirmed = await sandbox.call('POST', `/v1/asset-uploads/${upload.id}/confirmations`, {
        body: { parts: [{ part_number: 1, etag: sent.etag }] },
      })
      expect(confirmed.status).toBe(201)
      expect((confirmed.body as Asset).sha256).toBe(digest)
    } finally {
      clearInterval(sampler)
    }
    return { growth: Math.max(peak, process.memoryUsage().rss) - baseline, midway }
  }

  it('streams a 64 MiB part to disk as it arrives and assembles it without buffering it', async () => {
    // The first round grows the allocator's pools with socket chunks not yet collected; the
    // second one reuses them. Holding the part whole would need 64 MiB live at once, more than
    // the first round leaves behind, so it could not stay under the bound.
    const first = await uploadLargePart(0)
    const second = await uploadLargePart(1)
    // Half the part sent, the client waiting: the bytes are on disk already, not in memory.
    expect(first.midway).toBeGreaterThanOrEqual(16 * MiB)
    expect(second.midway).toBeGreaterThanOrEqual(16 * MiB)
    expect(second.growth).toBeLessThan(24 * MiB)
  })
})
