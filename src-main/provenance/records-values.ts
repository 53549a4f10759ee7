import type { ProvenanceMedia } from '../../src-shared/domain/provenance'

/**
 * Values as a provenance record may carry them: media by content, never by address, and nothing
 * that could open a door (a key, a presigned URL) or tell where a file sat on someone's disk.
 */

const SHA256 = /^[0-9a-f]{64}$/

/** Keys whose values are addresses: dropped whatever they hold. */
const ADDRESS_KEYS = new Set([
  'url',
  'path',
  'file',
  'thumbnail_url',
  'url_expires_at',
  'presigned_url',
  'download_url',
  'upload_url',
  'callback_url',
])

/** Keys that name a secret: dropped whatever they hold. */
const SECRET_KEY = /(^|[_-])(api[_-]?key|key|secret|token|password|authorization|credentials?)$/i

/** A URL, or an absolute local path (POSIX, Windows, file:). */
const ADDRESS = /^(?:[a-z][a-z0-9+.-]*:\/\/|file:|[a-z]:[\\/]|\/(?:[^\s/]+\/)+[^\s/]*$)/i

interface MediaLike {
  sha256: string
  content_type?: unknown
  media_type?: unknown
  asset_id?: unknown
}

/** A media value: the executor's ref (`kind: 'media'`) or a service output item with a sha256. */
export function isMediaLike(value: unknown): value is MediaLike {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const v = value as Record<string, unknown>
  return (
    typeof v.sha256 === 'string' &&
    SHA256.test(v.sha256) &&
    (v.kind === 'media' || 'url' in v || 'content_type' in v)
  )
}

/**
 * The value as a record carries it. `assetOf` names the asset that holds these bytes, when one
 * is known.
 */
export function cleanValue(value: unknown, assetOf: (sha256: string) => string | null): unknown {
  if (typeof value === 'string') return ADDRESS.test(value.trim()) ? null : value
  if (Array.isArray(value)) return value.map((item) => cleanValue(item, assetOf))
  if (typeof value !== 'object' || value === null) return value
  if (isMediaLike(value)) return mediaOf(value, assetOf)
  const clean: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (ADDRESS_KEYS.has(key) || SECRET_KEY.test(key)) continue
    clean[key] = cleanValue(item, assetOf)
  }
  return clean
}

function mediaOf(value: MediaLike, assetOf: (sha256: string) => string | null): ProvenanceMedia {
  const type = value.content_type ?? value.media_type
  return {
    media: {
      sha256: value.sha256,
      asset_id: typeof value.asset_id === 'string' ? value.asset_id : assetOf(value.sha256),
      media_type: typeof type === 'string' ? type : null,
    },
  }
}

/** One media item among a run's or a node's outputs. */
export interface FoundMedia {
  /** The output's name. */
  name: string
  /** Its place in a list output; 0 for a single value. */
  index: number
  sha256: string
  mediaType: string
  /** Where the bytes could be fetched (http(s) only; may have expired); null when unknown. */
  url: string | null
}

/** Every media item of a set of outputs, in output order then list order. */
export function mediaOutputsOf(outputs: Record<string, unknown>): FoundMedia[] {
  const found: FoundMedia[] = []
  for (const [name, value] of Object.entries(outputs)) {
    const items = Array.isArray(value) ? (value as unknown[]) : [value]
    items.forEach((item, index) => {
      if (!isMediaLike(item)) return
      const type = item.content_type ?? item.media_type
      const url = (item as { url?: unknown }).url
      found.push({
        name,
        index,
        sha256: item.sha256,
        mediaType: typeof type === 'string' ? type : 'application/octet-stream',
        url: typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null,
      })
    })
  }
  return found
}
