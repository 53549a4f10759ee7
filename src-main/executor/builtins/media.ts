import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { extname, isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sharp } from '../../native'
import type { MediaRef } from '../types'
import { requireService, type BuiltinRun } from './context'
import { BuiltinError, reasonOf, throwIfAborted } from './errors'
import { describeNode, isUuid, show } from './ports'

/**
 * Media on ports travel as `MediaRef`s, named by content. An image or video input also takes
 * what the service's built-ins take (a data: URL, an asset id, an http(s) URL) and, on this
 * machine, an absolute file path or file: URL: each is turned into a `MediaRef` whose bytes are
 * in the media store, so that what follows reads them locally and caches them by sha256.
 *
 * Reading a ref's bytes prefers the media store (by sha256, no network, whatever its URL says),
 * then its URL: an http(s) URL is downloaded into the store and checked against the sha256; a
 * local file is hashed, and a file that no longer holds those bytes fails with MEDIA_CHANGED
 * rather than feeding a node something its cache key does not name.
 */

const SHA256_HEX = /^[0-9a-f]{64}$/
const VIDEO_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
  '.mkv': 'video/x-matroska',
  '.gif': 'image/gif',
}

export type MediaKind = 'image' | 'video'

export function isMediaRef(value: unknown): value is MediaRef {
  if (typeof value !== 'object' || value === null) return false
  const ref = value as Record<string, unknown>
  return (
    ref.kind === 'media' &&
    typeof ref.sha256 === 'string' &&
    SHA256_HEX.test(ref.sha256) &&
    typeof ref.content_type === 'string' &&
    typeof ref.url === 'string'
  )
}

const isHttp = (text: string) => /^https?:\/\//i.test(text)

/** The local path a ref or an input string names, or null when it names none. */
function localPathOf(text: string): string | null {
  if (/^file:\/\//i.test(text)) {
    try {
      return fileURLToPath(text)
    } catch {
      return null
    }
  }
  return isAbsolute(text) ? text : null
}

function decodeDataUrl(text: string): { bytes: Buffer; contentType: string } | null {
  const comma = text.indexOf(',')
  if (comma < 0) return null
  const header = text.slice(5, comma)
  const parts = header.split(';')
  const contentType = parts[0]?.trim().toLowerCase() || 'application/octet-stream'
  const payload = text.slice(comma + 1)
  try {
    const bytes = parts.includes('base64')
      ? Buffer.from(payload, 'base64')
      : Buffer.from(decodeURIComponent(payload), 'utf8')
    return { bytes, contentType }
  } catch {
    return null
  }
}

async function hashFile(
  path: string,
  signal: AbortSignal,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path, { signal })) {
    const bytes = chunk as Buffer
    size += bytes.length
    hash.update(bytes)
  }
  return { sha256: hash.digest('hex'), size }
}

function unreadable(run: BuiltinRun, name: string, why: string, cause?: unknown): BuiltinError {
  return new BuiltinError(
    'MEDIA_UNREADABLE',
    `The input ${name} of node ${describeNode(run.node)} could not be read: ${why}.`,
    { cause },
  )
}

/** Width and height when the bytes are an image sharp reads; null otherwise. */
async function imageFacts(
  input: Buffer | string,
): Promise<{ format: string; width: number; height: number } | null> {
  try {
    const metadata = await sharp(input).metadata()
    const { width, height } = metadata.autoOrient
    return { format: metadata.format, width, height }
  } catch {
    return null
  }
}

function withSize(ref: MediaRef, facts: { width: number; height: number } | null): MediaRef {
  return facts ? { ...ref, width: facts.width, height: facts.height } : ref
}

async function fromBytes(
  run: BuiltinRun,
  bytes: Buffer,
  declared: string,
  kind: MediaKind,
): Promise<MediaRef> {
  const facts = kind === 'image' ? await imageFacts(bytes) : null
  const contentType = facts ? `image/${facts.format}` : declared
  const stored = await run.deps.media.put(bytes, contentType, {
    kind: 'output',
    signal: run.signal,
  })
  return withSize(
    { kind: 'media', sha256: stored.sha256, content_type: contentType, url: stored.path },
    facts,
  )
}

async function fromAsset(run: BuiltinRun, name: string, assetId: string): Promise<MediaRef> {
  const service = requireService(run, `reads the asset ${assetId}`)
  const asset = await service.get('/v1/assets/{asset_id}', {
    params: { path: { asset_id: assetId } },
    signal: run.signal,
  })
  if (asset.status_code !== 'ready' || asset.url === null) {
    throw unreadable(run, name, `the asset ${assetId} is ${asset.status_code}, not ready yet`)
  }
  const local = run.deps.media.has(asset.sha256) ? run.deps.media.path(asset.sha256) : null
  const ref: MediaRef = {
    kind: 'media',
    sha256: asset.sha256,
    content_type: asset.content_type,
    url: local ?? asset.url,
  }
  if (asset.width !== null) ref.width = asset.width
  if (asset.height !== null) ref.height = asset.height
  return ref
}

async function fromUrl(run: BuiltinRun, url: string, kind: MediaKind): Promise<MediaRef> {
  const stored = await run.deps.media.download(url, { kind: 'output', signal: run.signal })
  const facts = kind === 'image' ? await imageFacts(stored.path) : null
  const ref: MediaRef = {
    kind: 'media',
    sha256: stored.sha256,
    content_type: facts ? `image/${facts.format}` : stored.contentType,
    url: stored.path,
  }
  return withSize(ref, facts)
}

async function fromFile(
  run: BuiltinRun,
  name: string,
  path: string,
  kind: MediaKind,
): Promise<MediaRef> {
  try {
    await stat(path)
  } catch (error) {
    throw unreadable(run, name, `there is no file ${path}`, error)
  }
  const facts = kind === 'image' ? await imageFacts(path) : null
  const contentType = facts
    ? `image/${facts.format}`
    : (VIDEO_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream')
  // Copied into the store: the cache names it by content, and the user may edit the file later.
  const stored = await run.deps.media.put(createReadStream(path), contentType, {
    kind: 'output',
    signal: run.signal,
  })
  return withSize(
    { kind: 'media', sha256: stored.sha256, content_type: contentType, url: stored.path },
    facts,
  )
}

/**
 * The media on an input as a `MediaRef`; undefined when the input is optional and empty. Strings
 * are resolved as the module comment says; anything else fails with INPUT_INVALID.
 */
export async function mediaInput(
  run: BuiltinRun,
  name: string,
  kind: MediaKind,
  options: { required: boolean },
): Promise<MediaRef | undefined> {
  throwIfAborted(run.signal)
  const value = run.ports.raw(name)
  if (value === undefined || value === null) {
    if (!options.required) return undefined
    throw run.ports.missing(name, `connect an ${kind} to it or give it one`)
  }
  if (isMediaRef(value)) return value
  const wanted = `an ${kind}: a media reference, a data: URL, an asset id, an http(s) URL or an absolute file path`
  if (typeof value !== 'string' || value.trim() === '') throw run.ports.invalid(name, wanted)
  const text = value.trim()
  if (/^data:/i.test(text)) {
    const decoded = decodeDataUrl(text)
    if (!decoded) throw run.ports.invalid(name, `${wanted} (its data: URL does not decode)`, text)
    return fromBytes(run, decoded.bytes, decoded.contentType, kind)
  }
  if (isUuid(text)) return fromAsset(run, name, text.toLowerCase())
  if (isHttp(text)) return fromUrl(run, text, kind)
  const path = localPathOf(text)
  if (path !== null) return fromFile(run, name, path, kind)
  throw run.ports.invalid(name, wanted, text)
}

/**
 * A local file holding the ref's bytes, checked against its sha256: the store's copy when there
 * is one, else a download into the store, else the file the ref names.
 */
export async function localFileOf(
  run: BuiltinRun,
  name: string,
  ref: MediaRef,
): Promise<{ path: string; size: number }> {
  throwIfAborted(run.signal)
  const { media } = run.deps
  const entry = media.has(ref.sha256) ? media.stat(ref.sha256) : null
  if (entry) {
    try {
      return { path: media.path(ref.sha256), size: entry.size }
    } catch {
      // Evicted since the look: read it from where the ref says instead.
    }
  }
  if (isHttp(ref.url)) {
    const stored = await media.download(ref.url, {
      expectedSha256: ref.sha256,
      contentType: ref.content_type,
      kind: 'output',
      signal: run.signal,
    })
    return { path: stored.path, size: stored.size }
  }
  const path = localPathOf(ref.url)
  if (path === null) {
    throw unreadable(
      run,
      name,
      `its reference points at ${show(ref.url)}, neither a URL nor a file`,
    )
  }
  let found: { sha256: string; size: number }
  try {
    found = await hashFile(path, run.signal)
  } catch (error) {
    throwIfAborted(run.signal)
    throw unreadable(run, name, `the file ${path} cannot be read (${reasonOf(error)})`, error)
  }
  if (found.sha256 !== ref.sha256) {
    throw new BuiltinError(
      'MEDIA_CHANGED',
      `The file ${path} on input ${name} of node ${describeNode(run.node)} was changed since it was given to the flow (its sha256 is ${found.sha256}, not ${ref.sha256}); give the file to the flow again.`,
    )
  }
  return { path, size: found.size }
}

/** The size of the image in the file, or NOT_AN_IMAGE when sharp cannot read it. */
export async function imageSizeOf(
  run: BuiltinRun,
  name: string,
  ref: MediaRef,
  path: string,
): Promise<{ width: number; height: number }> {
  const facts = await imageFacts(path)
  if (facts) return facts
  throw new BuiltinError(
    'NOT_AN_IMAGE',
    `The input ${name} of node ${describeNode(run.node)} is not an image that can be read (${ref.content_type}); connect a PNG, JPEG, WebP, GIF, AVIF or TIFF image.`,
  )
}

/** An image input, its bytes in a local file, and its size (NOT_AN_IMAGE when unreadable). */
export async function imageOf(
  run: BuiltinRun,
  name: string,
): Promise<{ ref: MediaRef; path: string; width: number; height: number }> {
  const ref = await mediaInput(run, name, 'image', { required: true })
  if (!ref) throw run.ports.missing(name, 'connect an image to it')
  const { path } = await localFileOf(run, name, ref)
  return { ref, path, ...(await imageSizeOf(run, name, ref, path)) }
}

/** Stores an image a node made and names it by content. */
export async function storeImage(
  run: BuiltinRun,
  bytes: Buffer,
  contentType: string,
  source: MediaRef,
): Promise<MediaRef> {
  throwIfAborted(run.signal)
  const facts = await imageFacts(bytes)
  const stored = await run.deps.media.put(bytes, contentType, {
    kind: 'output',
    source: source.sha256,
    signal: run.signal,
  })
  return withSize(
    { kind: 'media', sha256: stored.sha256, content_type: contentType, url: stored.path },
    facts,
  )
}
