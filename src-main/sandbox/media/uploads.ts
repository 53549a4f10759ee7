import { isoTime } from '../clock'
import { conflict, invalid } from '../errors'
import type { Handlers } from '../handlers/types'
import { presentAsset } from './assets'
import { confirmUpload } from './confirm'
import { findAssetBySha, requireTargetFolder, UPLOADS, type AssetUpload } from './records'
import {
  DEFAULT_PART_SIZE,
  expiredError,
  freshPart,
  isOpen,
  readUpload,
  type UploadContext,
} from './upload-state'

export function uploadHandlers(context: UploadContext): Handlers {
  return {
    createAssetUpload: ({ body, auth, sandbox, status }) => {
      const { store } = sandbox
      const partSize = body.part_size ?? DEFAULT_PART_SIZE
      return store.transaction(() => {
        const folderId = body.folder_id ?? null
        if (folderId !== null) requireTargetFolder(store, auth.orgId, folderId, 'folder_id')
        const now = store.now()
        const base = {
          id: store.newId(),
          org_id: auth.orgId,
          filename: body.filename,
          content_type: body.content_type,
          size_bytes: body.size_bytes,
          sha256: body.sha256,
          folder_id: folderId,
          part_size: partSize,
          asset_id: null,
          created_at: now,
          updated_at: now,
        }
        const existing = findAssetBySha(store, auth.orgId, body.sha256)
        if (existing) {
          status(200)
          return store.insert<AssetUpload>(UPLOADS, auth.orgId, {
            ...base,
            status_code: 'duplicate',
            part_count: 0,
            parts: [],
            // Nothing is left to do, so nothing can expire later.
            expires_at: now,
            duplicate_of_asset_id: existing.id,
          })
        }
        const expiresAt = isoTime(sandbox.clock() + context.uploadTtlMs)
        // An empty file is one empty part, so that it is confirmed like any other.
        const partCount = Math.max(1, Math.ceil(body.size_bytes / partSize))
        const parts = Array.from({ length: partCount }, (_, index) => ({
          part_number: index + 1,
          ...freshPart(context, { id: base.id, expires_at: expiresAt }, index + 1),
          received: false,
          etag: null,
        }))
        return store.insert<AssetUpload>(UPLOADS, auth.orgId, {
          ...base,
          status_code: 'pending',
          part_count: partCount,
          parts,
          expires_at: expiresAt,
          duplicate_of_asset_id: null,
        })
      })
    },

    getAssetUpload: ({ params, auth }) => readUpload(context, auth.orgId, params.upload_id),

    refreshAssetUploadParts: ({ params, body, auth, sandbox }) => {
      const upload = readUpload(context, auth.orgId, params.upload_id)
      if (upload.status_code === 'expired') throw expiredError(upload)
      if (!isOpen(upload)) {
        throw conflict(
          `The upload ${upload.id} is ${upload.status_code}; it takes no more parts. GET /v1/assets/${upload.asset_id ?? upload.duplicate_of_asset_id ?? ''} for the asset.`,
        )
      }
      const outside = body.part_numbers.filter((n) => n > upload.part_count)
      if (outside.length > 0) {
        throw invalid(
          `The upload has parts 1 to ${upload.part_count}; there is no part ${outside.join(', ')}.`,
          body.part_numbers.flatMap((n, index) =>
            n > upload.part_count
              ? [
                  {
                    field: `part_numbers.${index}`,
                    code: 'maximum',
                    message: `part_numbers.${index} must be at most ${upload.part_count}.`,
                  },
                ]
              : [],
          ),
        )
      }
      const wanted = new Set(body.part_numbers)
      return sandbox.store.update<AssetUpload>(UPLOADS, upload.id, auth.orgId, (current) => ({
        ...current,
        parts: current.parts.map((part) =>
          wanted.has(part.part_number)
            ? { ...part, ...freshPart(context, current, part.part_number) }
            : part,
        ),
      }))
    },

    confirmAssetUpload: async ({ params, body, auth, sandbox, status }) => {
      const { asset, created } = await confirmUpload(
        context,
        auth.orgId,
        params.upload_id,
        body.parts,
        () => readUpload(context, auth.orgId, params.upload_id),
      )
      if (!created) status(200)
      return presentAsset(sandbox, asset, context.assetUrlTtlMs)
    },
  }
}
