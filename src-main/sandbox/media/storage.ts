import { createHash } from 'node:crypto'
import { createWriteStream, renameSync, rmSync, writeFileSync } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest, conflict, SandboxError } from '../errors'
import { UPLOADS, type AssetUpload } from './records'
import { partPath, temporaryPath } from './staging'
import {
  expectedPartSize,
  expiredError,
  expire,
  findUpload,
  hasExpired,
  type UploadContext,
} from './upload-state'

/**
 * Step 2 of the upload, played by the sandbox as object storage: `PUT` of a part's raw bytes to
 * its presigned URL, no API key. Like real storage it answers 200 with an ETag, 403 once the URL
 * has expired or when its signature is wrong, and keeps the last copy of a part sent twice.
 */

/** Parts up to this size are held in memory until they are whole: a socket read's worth. */
const WRITTEN_WHOLE_UP_TO = 64 * 1024

function refuseClosed(context: UploadContext, orgId: string, upload: AssetUpload): void {
  if (context.confirming.has(upload.id)) {
    throw conflict(
      `The upload ${upload.id} is being confirmed; its parts can no longer change. Wait for the confirmation's answer.`,
    )
  }
  if (upload.status_code === 'confirmed' || upload.status_code === 'duplicate') {
    throw conflict(
      `The upload ${upload.id} is already ${upload.status_code}; it takes no more parts.`,
    )
  }
  if (hasExpired(context, upload)) {
    expire(context, orgId, upload)
    throw expiredError(upload)
  }
}

function wrongSize(partNumber: number, expected: number, received: string): SandboxError {
  return badRequest(
    `Part ${partNumber} must be exactly ${expected} bytes (the upload's part_size, or the remainder for the last part); ${received} were sent.`,
  )
}

async function receivePart(
  context: UploadContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { store, blobs, clock, config } = context.services
  const verdict = blobs.verify(new URL(request.url, config.baseUrl), clock())
  if (verdict === 'expired') {
    throw new SandboxError(
      403,
      'URL_EXPIRED',
      'This part URL has expired; get a fresh one with POST /v1/asset-uploads/{upload_id}/parts and send the part again.',
    )
  }
  if (verdict === 'invalid') {
    throw new SandboxError(
      403,
      'SIGNATURE_INVALID',
      'This part URL is not valid: its signature does not match. Use the URL exactly as the upload gave it.',
    )
  }
  const params = request.params as { uploadId: string; partNumber: string }
  const partNumber = Number(params.partNumber)
  const found = findUpload(store, params.uploadId)
  if (
    !found ||
    !Number.isInteger(partNumber) ||
    partNumber < 1 ||
    partNumber > found.upload.part_count
  ) {
    throw new SandboxError(404, 'NOT_FOUND', 'There is no such upload part.')
  }
  refuseClosed(context, found.orgId, found.upload)
  const expected = expectedPartSize(found.upload, partNumber)
  const declared = request.headers['content-length']
  if (declared !== undefined && Number(declared) !== expected) {
    throw wrongSize(partNumber, expected, declared)
  }

  const staged = temporaryPath(blobs, found.upload.id, `part-${partNumber}`)
  const md5 = createHash('md5')
  let received = 0
  async function* counted(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      received += chunk.length
      // Past the expected size the rest is read and dropped, so the answer still arrives.
      if (received > expected) continue
      md5.update(chunk)
      yield chunk
    }
  }
  try {
    if (expected <= WRITTEN_WHOLE_UP_TO) {
      // A small part (a small file's only one) is gathered, then written in one call: a write
      // stream's open, write and close, each a trip through the thread pool, cost more than it.
      const chunks: Buffer[] = []
      for await (const chunk of counted(request.raw)) chunks.push(chunk)
      if (received === expected) writeFileSync(staged, Buffer.concat(chunks), { flag: 'wx' })
    } else {
      // Straight from the socket to disk: a larger part is never held in memory whole.
      await pipeline(request.raw, counted, createWriteStream(staged, { flags: 'wx' }))
    }
    if (received !== expected) throw wrongSize(partNumber, expected, String(received))
    // Whatever happened to the upload while the bytes were arriving decides.
    const current = findUpload(store, found.upload.id)
    if (!current) throw new SandboxError(404, 'NOT_FOUND', 'There is no such upload part.')
    refuseClosed(context, current.orgId, current.upload)
  } catch (error) {
    rmSync(staged, { force: true })
    throw error
  }
  const etag = `"${md5.digest('hex')}"`
  renameSync(staged, partPath(blobs, found.upload.id, partNumber))
  store.update<AssetUpload>(UPLOADS, found.upload.id, found.orgId, (upload) => ({
    ...upload,
    status_code: 'uploading',
    parts: upload.parts.map((part) =>
      part.part_number === partNumber ? { ...part, received: true, etag } : part,
    ),
  }))
  return reply.code(200).header('ETag', etag).send()
}

export function storageRoutes(context: UploadContext) {
  return (app: FastifyInstance): void => {
    void app.register((scope, _options, done) => {
      // Parts are raw bytes of any type; the handler reads the request stream itself.
      scope.removeAllContentTypeParsers()
      scope.addContentTypeParser('*', (_request, payload, parsed) => {
        parsed(null, payload)
      })
      scope.put('/_storage/uploads/:uploadId/parts/:partNumber', (request, reply) =>
        receivePart(context, request, reply),
      )
      done()
    })
  }
}
