import { isoTime } from '../clock'
import { blobUrl } from '../core-area'
import { listOf } from '../handlers/common'
import type { Handlers } from '../handlers/types'
import type { SandboxServices } from '../services'
import {
  ASSETS,
  checkName,
  hasThumbnailOnRequest,
  requireTargetFolder,
  thumbnailOf,
  type Asset,
} from './records'
import { thumbnailUrl } from './thumbnails'

/** The fields that hold presigned URLs: stored as null, minted afresh on every read. */
const URL_FIELDS = ['url', 'url_expires_at', 'thumbnail_url'] as const

/** The asset as a client sees it: with download and thumbnail URLs valid for `ttlMs`. */
export function presentAsset(services: SandboxServices, asset: Asset, ttlMs: number): Asset {
  const download = blobUrl(services, asset.sha256, asset.content_type, ttlMs)
  const thumbnail = thumbnailOf(asset)
  return {
    ...asset,
    url: download.url,
    // The signature carries whole seconds; the instant shown must not outlive the URL.
    url_expires_at: isoTime(Math.floor(download.expires_at / 1000) * 1000),
    thumbnail_url: thumbnail
      ? blobUrl(services, thumbnail.sha256, thumbnail.content_type, ttlMs).url
      : hasThumbnailOnRequest(asset)
        ? thumbnailUrl(services, asset.sha256, ttlMs)
        : null,
  }
}

/**
 * A listed item, maybe cut down by `fields`: its URL fields are refreshed, reading the whole
 * record when the projection left out what a URL is made from.
 */
function presentListed(
  services: SandboxServices,
  orgId: string,
  item: Asset,
  ttlMs: number,
): Asset {
  // Typed as a whole Asset by the list engine, but only the projected keys may be there.
  const present = (field: string) => Object.hasOwn(item, field)
  const wanted = URL_FIELDS.filter(present)
  if (wanted.length === 0) return item
  const whole =
    present('sha256') && present('content_type') && present('metadata')
      ? item
      : services.store.get<Asset>(ASSETS, item.id, orgId)
  if (!whole) return item
  const fresh = presentAsset(services, whole, ttlMs)
  const result: Record<string, unknown> = { ...item }
  for (const field of wanted) result[field] = fresh[field]
  return result as unknown as Asset
}

export function assetHandlers(urlTtlMs: number): Handlers {
  const list = listOf({ collection: ASSETS, schema: 'Asset' })
  return {
    listAssets: (context) => {
      const page = list(context)
      return {
        ...page,
        items: page.items.map((item) =>
          presentListed(context.sandbox, context.auth.orgId, item, urlTtlMs),
        ),
      }
    },

    getAsset: ({ params, auth, sandbox }) =>
      presentAsset(
        sandbox,
        sandbox.store.require<Asset>(ASSETS, params.asset_id, auth.orgId, 'The asset'),
        urlTtlMs,
      ),

    updateAsset: ({ params, body, auth, sandbox }) => {
      const { store } = sandbox
      if (body.name !== undefined) checkName(body.name, 'name', 'asset')
      const updated = store.transaction(() => {
        const asset = store.require<Asset>(ASSETS, params.asset_id, auth.orgId, 'The asset')
        const folderId = body.folder_id === undefined ? asset.folder_id : body.folder_id
        if (folderId !== null) requireTargetFolder(store, auth.orgId, folderId, 'folder_id')
        return store.update<Asset>(
          ASSETS,
          asset.id,
          auth.orgId,
          (current) => ({ ...current, name: body.name ?? current.name, folder_id: folderId }),
          'The asset',
          { parentId: folderId },
        )
      })
      return presentAsset(sandbox, updated, urlTtlMs)
    },

    deleteAsset: ({ params, auth, sandbox, status }) => {
      // The bytes stay: blobs are shared by content with other assets, runs and evaluations.
      sandbox.store.remove(ASSETS, params.asset_id, auth.orgId, 'The asset')
      status(204)
      return undefined
    },
  }
}
