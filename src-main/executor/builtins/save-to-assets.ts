import { readFile } from 'node:fs/promises'
import { embedProvenance } from '../../provenance'
import { isServiceError } from '../../service'
import type { MediaRef } from '../types'
import { local, requireService, type BuiltinRun, type BuiltinStep } from './context'
import { BuiltinError } from './errors'
import { localFileOf, mediaInput } from './media'
import { configUuid, describeNode, isUuid } from './ports'
import { uploadAsset } from './upload'

/**
 * `save_to_assets`: saves `image` (or, when no image is connected, `video`) among the
 * organization's assets and outputs the asset's id on `asset_id`. The folder is the `folder_id`
 * input when it has a value, else `config.folder_id`, else the root; it must exist
 * (FOLDER_NOT_FOUND otherwise). The name is the `name` input, else `<node slug>-<first 12 hex
 * digits of the sha256>.<type>`, so saving the same bytes from the same node gives the same name.
 * Bytes the organization already holds are never sent again (see `upload.ts`): the asset that has
 * them is the node's output, as the service's own built-in does.
 */

const EXTENSIONS: Record<string, string> = {
  jpeg: 'jpg',
  quicktime: 'mov',
  'svg+xml': 'svg',
  'x-matroska': 'mkv',
  'octet-stream': 'bin',
}

function extensionOf(ref: MediaRef): string {
  const subtype = ref.content_type.split(';')[0]?.split('/')[1]?.trim().toLowerCase() ?? 'bin'
  return EXTENSIONS[subtype] ?? (/^[a-z0-9]{1,8}$/.test(subtype) ? subtype : 'bin')
}

/** The types a provenance record can be written into (PNG as iTXt, WebP and JPEG as XMP). */
const RECORD_TYPES = new Set(['image/png', 'image/webp', 'image/jpeg'])

/**
 * The picture with its provenance record inside (issue 20), kept in the media store: an asset
 * saved from a flow carries the flow that made it, as a download does. The name keeps the
 * sha256 of the picture as made, so saving the same output twice still names it the same; the
 * record itself is the same for the same output, so the second save finds the first asset.
 * Null when there is no record to write (a picture this flow run did not make, another type).
 */
async function withItsRecord(
  run: BuiltinRun,
  kind: string,
  ref: MediaRef,
): Promise<{ ref: MediaRef; file: { path: string; size: number } } | null> {
  const type = ref.content_type.split(';')[0]?.trim().toLowerCase() ?? ''
  if (!RECORD_TYPES.has(type)) return null
  const record = run.deps.recordOf?.(ref.sha256, run.flowRunId) ?? null
  if (!record) return null
  const made = await readFile((await localFileOf(run, kind, ref)).path)
  let carried: Uint8Array
  try {
    carried = embedProvenance(made, record)
  } catch (error) {
    // A record too large for a JPEG's XMP: the picture is saved as made, and the log says so.
    run.emit({
      type: 'log',
      level: 'warning',
      message: `The picture is saved without its record: ${(error as Error).message}`,
    })
    return null
  }
  const stored = await run.deps.media.put(carried, type, { kind: 'output' })
  return {
    ref: { ...ref, sha256: stored.sha256, url: stored.path },
    file: { path: stored.path, size: stored.size },
  }
}

export const runSaveToAssets: BuiltinStep = async (run) => {
  const service = requireService(run, 'saves to the organization’s assets')
  const folderInput = run.ports.text('folder_id')
  if (folderInput !== undefined && folderInput !== '' && !isUuid(folderInput)) {
    throw run.ports.invalid('folder_id', 'a folder id (a UUID), or empty for the root')
  }
  const folderId =
    folderInput !== undefined && folderInput !== ''
      ? folderInput.toLowerCase()
      : configUuid(run.node, 'folder_id')
  const name = run.ports.text('name')
  if (name !== undefined) {
    const problem =
      name.trim() === ''
        ? 'a name that is not blank'
        : name !== name.trim()
          ? 'a name without spaces at its start or end'
          : /\p{Cc}/u.test(name)
            ? 'a name without control characters'
            : name.length > 255
              ? 'a name of at most 255 characters'
              : null
    if (problem) throw run.ports.invalid('name', problem)
  }
  const kind = run.ports.has('image') ? 'image' : 'video'
  const ref = await mediaInput(run, kind, kind, { required: false })
  if (!ref) {
    throw new BuiltinError(
      'INPUT_MISSING',
      `Node ${describeNode(run.node)} has nothing to save: connect an image or a video to it.`,
    )
  }
  if (folderId !== null) {
    try {
      await service.get('/v1/asset-folders/{id}', {
        params: { path: { id: folderId } },
        signal: run.signal,
      })
    } catch (error) {
      if (isServiceError(error) && error.status === 404) {
        throw new BuiltinError(
          'FOLDER_NOT_FOUND',
          `Node ${describeNode(run.node)} saves into the folder ${folderId}, which the organization does not have (or deleted); pick a folder from the assets, or leave it empty to save at the root.`,
        )
      }
      throw error
    }
  }
  const recorded = await withItsRecord(run, kind, ref)
  const saving = recorded?.ref ?? ref
  const file = recorded ? () => Promise.resolve(recorded.file) : () => localFileOf(run, kind, ref)
  const filename =
    name ?? `${run.node.slug ?? 'flow'}-${ref.sha256.slice(0, 12)}.${extensionOf(ref)}`
  const saved = await uploadAsset(run, service, { file, ref: saving, filename, folderId })
  const where = folderId === null ? 'the root' : `folder ${folderId}`
  run.emit({
    type: 'log',
    level: saved.foundIn === undefined ? 'info' : 'warning',
    message:
      saved.how === 'uploaded'
        ? `Saved the ${kind} as asset ${saved.assetId} in ${where}.`
        : saved.foundIn === undefined
          ? `The organization already holds these bytes as asset ${saved.assetId}; it is reused, nothing was uploaded.`
          : `The organization already holds these bytes as asset ${saved.assetId} in ${saved.foundIn === null ? 'the root' : `folder ${saved.foundIn}`}, not ${where}; that asset is reused rather than saved twice.`,
  })
  return local({ asset_id: saved.assetId })
}
