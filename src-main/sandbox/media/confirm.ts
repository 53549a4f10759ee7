import { existsSync, rmSync } from 'node:fs'
import { conflict, invalid, SandboxError, type FieldProblem } from '../errors'
import { inspectFile } from './inspect'
import {
  ASSETS,
  confirmedAsset,
  findAssetBySha,
  FOLDERS,
  UPLOADS,
  type Asset,
  type AssetUpload,
} from './records'
import { assemble, hashOf, partPath, removeUploadFiles, temporaryPath } from './staging'
import { ON_REQUEST } from './thumbnails'
import { expiredError, type UploadContext } from './upload-state'

export interface ListedPart {
  part_number: number
  etag: string
}

export interface Confirmed {
  asset: Asset
  /** False when the answer is an asset that already existed (a replay or a duplicate). */
  created: boolean
}

const MAX_NAME_LENGTH = 255

/** The file's own name, without the folders a client may have sent along. */
function assetName(filename: string): string {
  const base =
    filename
      .split(/[/\\]/)
      .map((segment) => segment.trim())
      .filter(Boolean)
      .pop() ?? ''
  return Array.from(base || 'untitled')
    .slice(0, MAX_NAME_LENGTH)
    .join('')
}

/** ETags travel quoted (`"abc"`), but clients often strip the quotes; both mean the same part. */
function bareEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1')
}

function partList(numbers: readonly number[]): string {
  const shown = numbers.slice(0, 20).join(', ')
  return numbers.length > 20 ? `${shown} and ${numbers.length - 20} more` : shown
}

function checkListedParts(upload: AssetUpload, listed: readonly ListedPart[]): void {
  const problems: FieldProblem[] = []
  const seen = new Set<number>()
  listed.forEach((part, index) => {
    const field = `parts.${index}.part_number`
    if (part.part_number > upload.part_count) {
      problems.push({
        field,
        code: 'maximum',
        message: `${field} must be at most ${upload.part_count}, the upload's part_count.`,
      })
    } else if (seen.has(part.part_number)) {
      problems.push({
        field,
        code: 'uniqueItems',
        message: `${field} lists part ${part.part_number} twice.`,
      })
    }
    seen.add(part.part_number)
  })
  if (problems.length > 0) {
    throw invalid(
      `The confirmation's parts are not valid: ${problems.map((p) => p.message).join(' ')}`,
      problems,
    )
  }
}

function refuseIncomplete(
  context: UploadContext,
  upload: AssetUpload,
  listed: readonly ListedPart[],
): void {
  const etags = new Map(listed.map((part) => [part.part_number, bareEtag(part.etag)]))
  const missing: number[] = []
  const unlisted: number[] = []
  const mismatched: number[] = []
  for (const part of upload.parts) {
    const n = part.part_number
    if (!part.received || !existsSync(partPath(context.services.blobs, upload.id, n)))
      missing.push(n)
    else if (!etags.has(n)) unlisted.push(n)
    else if (etags.get(n) !== bareEtag(part.etag ?? '')) mismatched.push(n)
  }
  if (missing.length + unlisted.length + mismatched.length === 0) return
  const reasons = [
    missing.length > 0
      ? `Storage has not received part(s) ${partList(missing)}: PUT them to their URLs (POST /v1/asset-uploads/${upload.id}/parts gives fresh ones).`
      : '',
    unlisted.length > 0
      ? `The confirmation leaves out part(s) ${partList(unlisted)}; list every part with its ETag.`
      : '',
    mismatched.length > 0
      ? `The ETag(s) of part(s) ${partList(mismatched)} differ from what storage returned for them (GET /v1/asset-uploads/${upload.id} shows them); a part sent again gets the ETag of its new bytes.`
      : '',
  ].filter(Boolean)
  throw conflict(`The upload ${upload.id} is incomplete. ${reasons.join(' ')}`, 'UPLOAD_INCOMPLETE')
}

/** The asset a finished upload led to, for a confirmation sent again. */
function finishedAsset(context: UploadContext, orgId: string, upload: AssetUpload): Confirmed {
  const id = upload.asset_id ?? upload.duplicate_of_asset_id ?? ''
  const asset = context.services.store.get<Asset>(ASSETS, id, orgId)
  if (!asset) {
    throw new SandboxError(
      404,
      'NOT_FOUND',
      `The asset ${id} that upload ${upload.id} led to has since been deleted; upload the file again to store it anew.`,
    )
  }
  return { asset, created: false }
}

function finishAsDuplicate(
  context: UploadContext,
  orgId: string,
  upload: AssetUpload,
  existing: Asset,
): Confirmed {
  context.services.store.update<AssetUpload>(UPLOADS, upload.id, orgId, (current) => ({
    ...current,
    status_code: 'duplicate',
    duplicate_of_asset_id: existing.id,
  }))
  removeUploadFiles(context.services.blobs, upload.id)
  return { asset: existing, created: false }
}

async function confirmNow(
  context: UploadContext,
  orgId: string,
  upload: AssetUpload,
  listed: readonly ListedPart[],
): Promise<Confirmed> {
  const { store, blobs } = context.services
  if (upload.status_code === 'confirmed' || upload.status_code === 'duplicate') {
    return finishedAsset(context, orgId, upload)
  }
  if (upload.status_code === 'expired') {
    removeUploadFiles(blobs, upload.id)
    throw expiredError(upload)
  }
  checkListedParts(upload, listed)
  refuseIncomplete(context, upload, listed)

  const parts = upload.parts.map((part) => partPath(blobs, upload.id, part.part_number))
  // One part (any file up to part_size: most uploads) is the whole file already: it is hashed
  // where it lies and linked into the blob store, not copied. Several are concatenated first.
  // Either way the parts stay in staging until the end, as a confirmation that fails must leave
  // them for the next one.
  const [first] = parts
  const source =
    parts.length === 1 && first !== undefined
      ? { file: first, assembled: false }
      : { file: temporaryPath(blobs, upload.id, 'assembled'), assembled: true }
  const { sha256, size, bytes } = source.assembled
    ? { ...(await assemble(parts, source.file)), bytes: undefined }
    : await hashOf(source.file, upload.size_bytes)
  const dropAssembled = () => {
    if (source.assembled) rmSync(source.file, { force: true })
  }
  if (sha256 !== upload.sha256 || size !== upload.size_bytes) {
    dropAssembled()
    const message = `The uploaded bytes (${size} bytes, sha256 ${sha256}) are not the declared file (${upload.size_bytes} bytes, sha256 ${upload.sha256}). Send the wrong parts again (each part's ETag is the MD5 of its bytes) and confirm again, or start a new upload with the right sha256.`
    throw invalid(message, [{ field: 'sha256', code: 'checksum', message }])
  }
  const twin = findAssetBySha(store, orgId, sha256)
  if (twin) {
    dropAssembled()
    return finishAsDuplicate(context, orgId, upload, twin)
  }

  const stored = source.assembled
    ? blobs.adopt(source.file, sha256)
    : blobs.adoptLinked(source.file, sha256)
  // No thumbnail now: it is made when first requested (see thumbnails.ts for why).
  const inspection = await inspectFile(stored, size, upload.content_type, {
    thumbnail: false,
    bytes,
  })
  const thumbnail = inspection.previewable ? ON_REQUEST : null

  const result = store.transaction((): Confirmed => {
    // Another upload of the same bytes may have been confirmed while this one was hashing.
    const raced = findAssetBySha(store, orgId, sha256)
    if (raced) return finishAsDuplicate(context, orgId, upload, raced)
    // An upload outlives a folder deleted meanwhile; its asset then lands at the root.
    const folderId =
      upload.folder_id !== null && store.get(FOLDERS, upload.folder_id, orgId)
        ? upload.folder_id
        : null
    const now = store.now()
    const asset = confirmedAsset({
      id: store.newId(),
      orgId,
      folderId,
      name: assetName(upload.filename),
      inspection,
      size,
      sha256,
      upload,
      thumbnail,
      at: now,
    })
    store.insert(ASSETS, orgId, asset, folderId)
    store.update<AssetUpload>(UPLOADS, upload.id, orgId, (current) => ({
      ...current,
      status_code: 'confirmed',
      asset_id: asset.id,
    }))
    return { asset, created: true }
  })
  removeUploadFiles(blobs, upload.id)
  return result
}

/**
 * Step 3 of the upload. Confirmations of one upload run one after the other, so a second one
 * sent while the first is still hashing answers the first one's asset (200) instead of
 * assembling the same bytes twice.
 */
export async function confirmUpload(
  context: UploadContext,
  orgId: string,
  uploadId: string,
  listed: readonly ListedPart[],
  read: () => AssetUpload,
): Promise<Confirmed> {
  const before = context.confirming.get(uploadId)
  const run = (async () => {
    if (before) await before.catch(() => undefined)
    return confirmNow(context, orgId, read(), listed)
  })()
  context.confirming.set(uploadId, run)
  try {
    return await run
  } finally {
    if (context.confirming.get(uploadId) === run) context.confirming.delete(uploadId)
  }
}
