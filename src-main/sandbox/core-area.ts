import type { FastifyInstance } from 'fastify'
import { SandboxError } from './errors'
import { accountHandlers } from './handlers/account'
import { referenceHandlers } from './handlers/reference'
import type { SandboxArea } from './handlers/types'
import type { SandboxServices } from './services'

/**
 * Presigned download URL of a stored blob: `/_storage/blobs/<sha256>?ct=<content type>`. Other
 * areas mint these with `blobUrl` for run outputs and assets.
 */
export function blobUrl(
  services: SandboxServices,
  sha256: string,
  contentType: string,
  ttlMs = 60 * 60 * 1000,
): { url: string; expires_at: number } {
  const expiresAt = services.clock() + ttlMs
  const resource = `/_storage/blobs/${sha256}?ct=${encodeURIComponent(contentType)}`
  return {
    url: services.blobs.presign(services.config.baseUrl, resource, expiresAt),
    expires_at: expiresAt,
  }
}

function storageRoutes(services: SandboxServices) {
  return (app: FastifyInstance) => {
    app.get('/_storage/blobs/:sha256', (request, reply) => {
      const url = new URL(request.url, services.config.baseUrl)
      const verdict = services.blobs.verify(url, services.clock())
      if (verdict !== 'ok') {
        throw new SandboxError(
          403,
          verdict === 'expired' ? 'URL_EXPIRED' : 'SIGNATURE_INVALID',
          verdict === 'expired'
            ? 'This presigned URL has expired; fetch the record again for a fresh one.'
            : 'This presigned URL is not valid.',
        )
      }
      const { sha256 } = request.params as { sha256: string }
      if (!services.blobs.has(sha256)) throw new SandboxError(404, 'NOT_FOUND', 'No such blob.')
      return reply
        .type(url.searchParams.get('ct') ?? 'application/octet-stream')
        .header('Content-Length', services.blobs.size(sha256))
        .header('Cache-Control', 'private, max-age=3600, immutable')
        .send(services.blobs.open(sha256))
    })
  }
}

/** Account, status, tombstones, reference tables and blob downloads. */
export function createCoreArea(services: SandboxServices): SandboxArea {
  return {
    handlers: { ...accountHandlers, ...referenceHandlers },
    routes: storageRoutes(services),
  }
}
