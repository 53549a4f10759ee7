import type { Inspection } from './inspect'
import type { components } from '../../../src-shared/api'
import { invalid, SandboxError } from '../errors'
import type { RecordStore } from '../store'

export type Asset = components['schemas']['Asset']
export type AssetFolder = components['schemas']['AssetFolder']
export type AssetUpload = components['schemas']['AssetUpload']
export type PresignedPart = components['schemas']['PresignedPart']

/** Collection names; the evaluations area reads assets from `assets` by id, bytes by sha256. */
export const ASSETS = 'assets'
export const FOLDERS = 'asset_folders'
export const UPLOADS = 'asset_uploads'

/**
 * What an image asset's `metadata.thumbnail` holds when the thumbnail was made with the asset (the
 * history seeder's assets): the thumbnail is a blob of its own.
 */
export interface ThumbnailInfo {
  sha256: string
  content_type: string
  width: number
  height: number
}

/**
 * What an uploaded image's `metadata.thumbnail` holds: its thumbnail is made from the asset's
 * bytes when it is first requested (see `thumbnails.ts`), so neither its hash nor its size is
 * known before.
 */
export interface OnRequestThumbnail {
  content_type: string
  on_request: true
}

export function thumbnailOf(asset: Pick<Asset, 'metadata'>): ThumbnailInfo | null {
  const thumbnail = asset.metadata.thumbnail as Partial<ThumbnailInfo> | undefined
  return typeof thumbnail?.sha256 === 'string' && typeof thumbnail.content_type === 'string'
    ? (thumbnail as ThumbnailInfo)
    : null
}

export function hasThumbnailOnRequest(asset: Pick<Asset, 'metadata'>): boolean {
  const thumbnail = asset.metadata.thumbnail as Partial<OnRequestThumbnail> | undefined
  return thumbnail?.on_request === true
}

/**
 * The asset a confirmed upload becomes: the one shape both the three-step upload and the history
 * seeder write, so a seeded asset cannot differ from an uploaded one. URLs are minted at read time.
 */
export function confirmedAsset(fields: {
  id: string
  orgId: string
  folderId: string | null
  name: string
  inspection: Inspection
  size: number
  sha256: string
  upload: { id: string; filename: string; content_type?: string }
  thumbnail: ThumbnailInfo | OnRequestThumbnail | null
  at: string
}): Asset {
  const { inspection, upload } = fields
  return {
    id: fields.id,
    org_id: fields.orgId,
    folder_id: fields.folderId,
    name: fields.name,
    media_type: inspection.media_type,
    content_type: inspection.content_type,
    size_bytes: fields.size,
    sha256: fields.sha256,
    width: inspection.width,
    height: inspection.height,
    duration_ms: inspection.duration_ms,
    url: null,
    url_expires_at: null,
    thumbnail_url: null,
    status_code: inspection.status_code,
    metadata: {
      ...inspection.details,
      upload_id: upload.id,
      filename: upload.filename,
      ...(upload.content_type === undefined || inspection.content_type === upload.content_type
        ? {}
        : { declared_content_type: upload.content_type }),
      ...(fields.thumbnail ? { thumbnail: fields.thumbnail } : {}),
    },
    created_at: fields.at,
    updated_at: fields.at,
    deleted_at: null,
  }
}

/** The organization's live asset with these bytes, if any: the duplicate rule. */
export function findAssetBySha(store: RecordStore, orgId: string, sha256: string): Asset | null {
  const row = store
    .prepared(
      // Named: for ORDER BY … LIMIT 1 the planner prefers walking records_by_created, which reads
      // every asset of the organization for each question (an upload of n files cost n²).
      `SELECT doc FROM records INDEXED BY records_by_sha256
         WHERE collection = ? AND org_id = ? AND deleted_at IS NULL
         AND json_extract(doc, '$.sha256') = ? ORDER BY created_at, id LIMIT 1`,
    )
    .get(ASSETS, orgId, sha256) as { doc: string } | undefined
  return row ? (JSON.parse(row.doc) as Asset) : null
}

/**
 * A folder something is being put into (a new folder's parent, a move, an upload's folder). A
 * folder that does not exist, is deleted or belongs to another organization is a 409, as the
 * contract states for moves: the request is well-formed, the tree just does not allow it.
 */
export function requireTargetFolder(
  store: RecordStore,
  orgId: string,
  folderId: string,
  field: string,
): AssetFolder {
  const folder = store.get<AssetFolder>(FOLDERS, folderId, orgId)
  if (!folder) {
    throw new SandboxError(
      409,
      'CONFLICT',
      `${field} names the folder ${folderId}, which does not exist in this organization or was deleted; list folders with GET /v1/asset-folders and pick a live one (null is the root).`,
    )
  }
  return folder
}

/**
 * Names people read in a file browser and a mirror may write to disk: no control characters, no
 * blank or padded names; folder names are also never `.` or `..` (their paths would lie).
 */
export function checkName(name: string, field: string, kind: 'folder' | 'asset'): void {
  const problem = nameProblem(name, kind)
  if (problem) {
    throw invalid(`The ${kind} name ${JSON.stringify(name)} ${problem}.`, [
      { field, code: 'pattern', message: `${field} ${problem}.` },
    ])
  }
}

/** What is wrong with a folder's or asset's name, in words that follow it, or null. */
export function nameProblem(name: string, kind: 'folder' | 'asset'): string | null {
  return name.trim() === ''
    ? 'must not be blank'
    : name !== name.trim()
      ? 'must not start or end with spaces'
      : /\p{Cc}/u.test(name)
        ? 'must not contain control characters'
        : kind === 'folder' && (name === '.' || name === '..')
          ? 'must not be . or ..'
          : null
}
