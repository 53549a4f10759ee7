import { isoTime } from '../clock'
import { conflict, SandboxError } from '../errors'
import type { SandboxServices } from '../services'
import type { RecordStore } from '../store'
import { UPLOADS, type AssetUpload, type PresignedPart } from './records'
import { removeUploadFiles, stagedUploadIds } from './staging'

export const DEFAULT_PART_SIZE = 8 * 1024 * 1024

/** Shared by the upload operations, the storage routes and the expiry sweep. */
export interface UploadContext {
  services: SandboxServices
  partUrlTtlMs: number
  uploadTtlMs: number
  assetUrlTtlMs: number
  /** Confirmations in progress, by upload id: storage refuses parts of these meanwhile. */
  confirming: Map<string, Promise<unknown>>
}

function partResource(uploadId: string, partNumber: number): string {
  return `/_storage/uploads/${uploadId}/parts/${partNumber}`
}

/** The byte count a part must have: part_size, but the remainder for the last one. */
export function expectedPartSize(upload: AssetUpload, partNumber: number): number {
  return partNumber < upload.part_count
    ? upload.part_size
    : upload.size_bytes - upload.part_size * (upload.part_count - 1)
}

export function freshPart(
  context: UploadContext,
  upload: Pick<AssetUpload, 'id' | 'expires_at'>,
  partNumber: number,
): Pick<PresignedPart, 'url' | 'expires_at'> {
  const { services } = context
  // Whole seconds, as the signature has them; never past the upload's own expiry.
  const expiresAt =
    Math.floor(
      Math.min(services.clock() + context.partUrlTtlMs, Date.parse(upload.expires_at)) / 1000,
    ) * 1000
  return {
    url: services.blobs.presign(
      services.config.baseUrl,
      partResource(upload.id, partNumber),
      expiresAt,
    ),
    expires_at: isoTime(expiresAt),
  }
}

export function isOpen(upload: AssetUpload): boolean {
  return upload.status_code === 'pending' || upload.status_code === 'uploading'
}

export function hasExpired(context: UploadContext, upload: AssetUpload): boolean {
  return (
    upload.status_code === 'expired' ||
    (isOpen(upload) && Date.parse(upload.expires_at) <= context.services.clock())
  )
}

/** Marks an open upload past its expiry as expired and drops its staged bytes. */
export function expire(context: UploadContext, orgId: string, upload: AssetUpload): AssetUpload {
  const { store, blobs } = context.services
  const expired = isOpen(upload)
    ? store.update<AssetUpload>(UPLOADS, upload.id, orgId, (current) => ({
        ...current,
        status_code: 'expired',
      }))
    : upload
  if (!context.confirming.has(upload.id)) removeUploadFiles(blobs, upload.id)
  return expired
}

export function expiredError(upload: AssetUpload): SandboxError {
  return conflict(
    `The upload ${upload.id} expired at ${upload.expires_at} before it was confirmed; its parts were discarded. Start a new upload with POST /v1/asset-uploads.`,
    'UPLOAD_EXPIRED',
  )
}

/** Reads an upload, expiring it on the way when its time has passed. */
export function readUpload(context: UploadContext, orgId: string, uploadId: string): AssetUpload {
  const upload = context.services.store.require<AssetUpload>(UPLOADS, uploadId, orgId, 'The upload')
  return upload.status_code !== 'expired' && hasExpired(context, upload)
    ? expire(context, orgId, upload)
    : upload
}

/** An upload by id whatever its organization: storage URLs carry no credentials. */
export function findUpload(
  store: RecordStore,
  uploadId: string,
): { orgId: string; upload: AssetUpload } | null {
  const row = store
    .prepared(
      `SELECT org_id, doc FROM records WHERE collection = ? AND id = ? AND deleted_at IS NULL`,
    )
    .get(UPLOADS, uploadId) as { org_id: string; doc: string } | undefined
  return row ? { orgId: row.org_id, upload: JSON.parse(row.doc) as AssetUpload } : null
}

/**
 * Expires every open upload whose time has passed and removes staged files no open upload owns
 * (left by a crash, or by an upload that ended while a part was still arriving).
 */
export function sweepUploads(context: UploadContext): void {
  const { store, blobs } = context.services
  const rows = store.db
    .prepare(
      `SELECT org_id, doc FROM records WHERE collection = ? AND deleted_at IS NULL
         AND json_extract(doc, '$.status_code') IN ('pending', 'uploading')
         AND json_extract(doc, '$.expires_at') <= ?`,
    )
    .all(UPLOADS, store.now()) as { org_id: string; doc: string }[]
  for (const row of rows) {
    const upload = JSON.parse(row.doc) as AssetUpload
    if (!context.confirming.has(upload.id)) expire(context, row.org_id, upload)
  }
  for (const id of stagedUploadIds(blobs)) {
    if (context.confirming.has(id)) continue
    const found = findUpload(store, id)
    if (!found || !isOpen(found.upload)) removeUploadFiles(blobs, id)
  }
}
