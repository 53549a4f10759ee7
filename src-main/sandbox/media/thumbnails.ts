import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { SandboxError } from '../errors'
import type { SandboxServices } from '../services'
import { renderThumbnail, THUMBNAIL_TYPE } from './inspect'
import type { OnRequestThumbnail } from './records'

/**
 * Thumbnails of uploaded images, made when they are first requested.
 *
 * Decision: confirming an upload does not make the image's thumbnail. The contract gives an asset
 * a `thumbnail_url` (a URL, or null) and says nothing of when the thumbnail is made, and most are
 * never asked for: a client shows a screen of them at a time, and Atelier's sync fetches one only
 * for an image too large to keep whole. Made at confirmation, a thumbnail (a decode, a resize, a
 * WebP encode and a file written) was a quarter of the sandbox's CPU time for each small image
 * uploaded (2.2 of 8.8 ms), and a folder of ten thousand pictures waited on all of them, most of
 * which nobody would look at. So a confirmed image records
 * `metadata.thumbnail = { content_type, on_request: true }` (its header has been read, so it is an
 * image libvips decodes), every read of the asset carries a presigned `thumbnail_url` to
 * `/_storage/thumbnails/<the asset's sha256>`, and the first GET there makes the thumbnail from the
 * stored bytes, the same rendering as before (upright, inside 256×256, WebP), keeps it beside the
 * blobs by the source's hash and serves it. Later GETs, for this asset or any other with the same
 * bytes, serve the kept file; GETs that come while it is being made wait for it. What a request
 * now learns that confirmation used to: an image whose header reads but whose pixels do not
 * decode answers 404 here (it used to get `thumbnail_url: null` and a `thumbnail_error`).
 * Assets that hold their thumbnail's hash (the history seeder's) are served as blobs, as before.
 */

export const ON_REQUEST: OnRequestThumbnail = { content_type: THUMBNAIL_TYPE, on_request: true }

const KIND = 'thumbnails'

function resourceOf(sha256: string): string {
  return `/_storage/thumbnails/${sha256}`
}

/** The presigned URL of the thumbnail of the stored image `sha256`, valid for `ttlMs`. */
export function thumbnailUrl(services: SandboxServices, sha256: string, ttlMs: number): string {
  return services.blobs.presign(
    services.config.baseUrl,
    resourceOf(sha256),
    services.clock() + ttlMs,
  )
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

export function thumbnailRoutes(services: SandboxServices) {
  const { blobs } = services
  /** Thumbnails being made, by their source's hash: a second request waits for the first. */
  const making = new Map<string, Promise<string>>()

  const make = async (sha256: string): Promise<string> => {
    const path = blobs.derivedPath(KIND, sha256)
    if (await exists(path)) return path
    const thumbnail = await renderThumbnail(blobs.pathOf(sha256)).catch((error: unknown) => {
      throw new SandboxError(
        404,
        'NOT_FOUND',
        `This image has no thumbnail: its pixels do not decode (${(error as Error).message}).`,
      )
    })
    await mkdir(dirname(path), { recursive: true })
    const partial = `${path}.${randomBytes(6).toString('hex')}.tmp`
    try {
      await writeFile(partial, thumbnail.bytes, { flag: 'wx' })
      await rename(partial, path)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    }
    return path
  }

  const pathOf = (sha256: string): Promise<string> => {
    let made = making.get(sha256)
    if (!made) {
      made = make(sha256).finally(() => making.delete(sha256))
      making.set(sha256, made)
    }
    return made
  }

  return (app: FastifyInstance): void => {
    app.get('/_storage/thumbnails/:sha256', async (request, reply) => {
      const url = new URL(request.url, services.config.baseUrl)
      const verdict = blobs.verify(url, services.clock())
      if (verdict !== 'ok') {
        throw new SandboxError(
          403,
          verdict === 'expired' ? 'URL_EXPIRED' : 'SIGNATURE_INVALID',
          verdict === 'expired'
            ? 'This presigned URL has expired; fetch the asset again for a fresh one.'
            : 'This presigned URL is not valid.',
        )
      }
      const { sha256 } = request.params as { sha256: string }
      if (!blobs.has(sha256)) throw new SandboxError(404, 'NOT_FOUND', 'No such image.')
      const path = await pathOf(sha256)
      return reply
        .type(THUMBNAIL_TYPE)
        .header('Content-Length', (await stat(path)).size)
        .header('Cache-Control', 'private, max-age=3600, immutable')
        .send(createReadStream(path))
    })
  }
}
