import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import { assetHandlers } from './assets'
import { folderHandlers } from './folders'
import { storageRoutes } from './storage'
import { thumbnailRoutes } from './thumbnails'
import { sweepUploads, type UploadContext } from './upload-state'
import { uploadHandlers } from './uploads'

export { seedAssets } from './history'
export { nameProblem } from './records'

export interface MediaOptions {
  /** How long a presigned part URL accepts PUTs (default 15 minutes). */
  partUrlTtlMs?: number
  /** How long an upload may take from start to confirmation (default 24 hours). */
  uploadTtlMs?: number
  /** How long the download and thumbnail URLs of an asset stay valid (default 1 hour). */
  assetUrlTtlMs?: number
  /** How often expired uploads are swept and their staged parts removed (default 1 minute). */
  sweepIntervalMs?: number
}

/**
 * Media: assets, asset folders and the three-step presigned upload.
 *
 * 1. `createAssetUpload` declares the file (size, sha256) and answers one presigned URL per
 *    part; bytes the organization already holds as a live asset answer 200 `duplicate`, no parts.
 * 2. The client PUTs each part to its URL (routes of `storage.ts`, outside the contract); parts
 *    are streamed to staging files, never held in memory whole (but for parts of up to 64 KiB,
 *    written in one call).
 * 3. `confirmAssetUpload` checks every part and ETag, concatenates the parts into the blob store
 *    while hashing (a single part is hashed and linked there), checks the sha256, sniffs the
 *    media type, reads an image's size and creates the asset; an image's thumbnail is made when
 *    it is first requested (`thumbnails.ts`). When two uploads of the same bytes race, the first
 *    confirmation creates the asset and the second answers 200 with that same asset (its upload
 *    turns `duplicate`).
 *
 * Assets live in `assets` (parent = folder; bytes in the blob store by `sha256`), folders in
 * `asset_folders` (parent = parent folder), uploads in `asset_uploads`.
 */
export function createMediaArea(
  services: SandboxServices,
  options: MediaOptions = {},
): SandboxArea {
  const context: UploadContext = {
    services,
    partUrlTtlMs: options.partUrlTtlMs ?? 15 * 60 * 1000,
    uploadTtlMs: options.uploadTtlMs ?? 24 * 60 * 60 * 1000,
    assetUrlTtlMs: options.assetUrlTtlMs ?? 60 * 60 * 1000,
    confirming: new Map(),
  }
  let stopped = false
  const sweep = () => {
    if (stopped) return
    try {
      sweepUploads(context)
    } catch (error) {
      // A failed sweep leaves files for the next one; it must never take the sandbox down.
      console.error('sandbox: sweeping expired uploads failed', error)
    }
  }
  // The first sweep soon after start clears what a previous run of a kept --data folder left.
  const firstSweep = setTimeout(sweep, 1000)
  const sweeper = setInterval(sweep, options.sweepIntervalMs ?? 60 * 1000)
  firstSweep.unref()
  sweeper.unref()

  return {
    handlers: {
      ...folderHandlers,
      ...assetHandlers(context.assetUrlTtlMs),
      ...uploadHandlers(context),
    },
    routes: (app) => {
      storageRoutes(context)(app)
      thumbnailRoutes(services)(app)
    },
    stop: () => {
      stopped = true
      clearTimeout(firstSweep)
      clearInterval(sweeper)
    },
  }
}
