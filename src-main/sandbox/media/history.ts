import { createHash, randomUUID } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { sharp } from '../../native'
import { isoTime, uuidv7 } from '../clock'
import { runModel } from '../models'
import type { SandboxServices } from '../services'
import { inspectFile, THUMBNAIL_TYPE, type Inspection } from './inspect'
import {
  ASSETS,
  confirmedAsset,
  FOLDERS,
  UPLOADS,
  type AssetFolder,
  type AssetUpload,
  type ThumbnailInfo,
} from './records'
import { DEFAULT_PART_SIZE } from './upload-state'

export interface AssetsSummary {
  assets: number
  folders: number
  /** Bytes written to the blob store for the assets (thumbnails aside). */
  bytes: number
}

const DAY_MS = 24 * 60 * 60 * 1000
const WINDOW_MS = 90 * DAY_MS
const BATCH = 5_000
/** What an upload takes from its start to its confirmation, at most. */
const UPLOAD_MS = 8_000
/** The TTLs the media area uses for part URLs and uploads (its defaults). */
const PART_URL_TTL_MS = 15 * 60 * 1000
const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000

type Kind = 'photo' | 'cutout' | 'graphic' | 'video'

/**
 * The library's folders, parents before children and shallow ones first, so that a small library
 * keeps the top of the tree. `kinds` is what people put there (any kind when left out).
 */
const TREE: readonly { path: string; kinds?: readonly Kind[]; weight: number }[] = [
  { path: '/Campaigns', weight: 1 },
  { path: '/Clients', weight: 1 },
  { path: '/References', weight: 1 },
  { path: '/Video', kinds: ['video'], weight: 1 },
  { path: '/Inbox', weight: 6 },
  { path: '/Archive', weight: 2 },
  { path: '/Campaigns/Spring campaign', weight: 2 },
  { path: '/Campaigns/Autumn lookbook', weight: 2 },
  { path: '/Clients/Nordlys', weight: 1 },
  { path: '/Clients/Halden Coffee', weight: 2 },
  { path: '/References/Moodboards', kinds: ['photo', 'graphic'], weight: 3 },
  { path: '/References/Textures', kinds: ['graphic'], weight: 2 },
  { path: '/References/Colour studies', kinds: ['graphic'], weight: 2 },
  { path: '/Video/Loops', kinds: ['video'], weight: 4 },
  { path: '/Video/Storyboards', kinds: ['photo', 'graphic', 'video'], weight: 2 },
  { path: '/Archive/Old exports', weight: 3 },
  { path: '/Campaigns/Spring campaign/Hero shots', kinds: ['photo'], weight: 4 },
  { path: '/Campaigns/Spring campaign/Social', kinds: ['photo', 'graphic', 'video'], weight: 4 },
  { path: '/Campaigns/Autumn lookbook/Selects', kinds: ['photo'], weight: 4 },
  { path: '/Campaigns/Autumn lookbook/Rejects', kinds: ['photo'], weight: 2 },
  { path: '/Clients/Nordlys/Product shots', kinds: ['cutout', 'photo'], weight: 2 },
  { path: '/Clients/Nordlys/Shoots', weight: 0 },
  { path: '/Clients/Halden Coffee/Menu boards', kinds: ['graphic', 'photo'], weight: 3 },
  { path: '/Clients/Halden Coffee/Window posters', kinds: ['graphic'], weight: 2 },
  { path: '/Archive/Old exports/Unsorted', weight: 2 },
  { path: '/Campaigns/Spring campaign/Social/Stories', kinds: ['video', 'photo'], weight: 3 },
  { path: '/Campaigns/Spring campaign/Social/Feed posts', kinds: ['photo', 'graphic'], weight: 3 },
  { path: '/Clients/Nordlys/Product shots/Packshots', kinds: ['cutout'], weight: 5 },
  { path: '/Clients/Nordlys/Product shots/Lifestyle', kinds: ['photo'], weight: 4 },
]
const SHOOTS_PARENT = '/Clients/Nordlys/Shoots'
/** Assets at the root of the library, outside any folder. */
const ROOT_SHARE = 0.12
const VIDEO_SHARE = 0.12

/** The pictures and clips the library is made of: rendered once, each asset a variant of one. */
interface SampleSpec {
  kind: Kind
  stems: readonly string[]
  render: () => Promise<Buffer>
  format: 'jpeg' | 'png'
}

interface Sample {
  kind: Kind
  stems: readonly string[]
  extension: string
  contentType: string
  inspection: Inspection
  thumbnail: ThumbnailInfo | null
  /** The sample's bytes made unique to one asset, as real files are (a title, a timestamp). */
  variant: (title: string, createdMs: number) => Buffer
}

async function picture(
  prompt: string,
  style: string,
  width: number,
  height: number,
  seed: number,
): Promise<Buffer> {
  const result = await runModel(
    'atelier/text-to-image',
    { prompt, style, width, height, seed },
    { seed },
  )
  if (!result.ok || !result.files[0]) throw new Error(`could not render the sample "${prompt}"`)
  return result.files[0].bytes
}

async function cutout(): Promise<Buffer> {
  const backdrop = await picture('a bottle on a plain backdrop', 'studio', 384, 512, 12)
  const result = await runModel(
    'atelier/remove-background',
    { image: 'https://assets.atelier.invalid/samples/bottle.png', tolerance: 40 },
    { seed: 12, fetchImage: () => Promise.resolve(backdrop), failureRate: 0 },
  )
  if (!result.ok || !result.files[0]) throw new Error('could not cut out the packshot sample')
  return result.files[0].bytes
}

const jpeg = async (png: Promise<Buffer>): Promise<Buffer> =>
  sharp(await png)
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 82 })
    .toBuffer()

// ---- WebM: the clips are real VP8 video, each frame the key frame of a lossy WebP ----

function vint(size: number): Buffer {
  for (let length = 1; length <= 8; length++) {
    if (size < 2 ** (7 * length) - 1) {
      const bytes = Buffer.alloc(length)
      let rest = size
      for (let i = length - 1; i >= 0; i--) {
        bytes[i] = rest % 256
        rest = Math.floor(rest / 256)
      }
      bytes[0] = (bytes[0] ?? 0) | (0x80 >> (length - 1))
      return bytes
    }
  }
  throw new Error('element too large')
}

function element(id: number[], ...data: Buffer[]): Buffer {
  const body = Buffer.concat(data)
  return Buffer.concat([Buffer.from(id), vint(body.length), body])
}

function uint(value: number): Buffer {
  const bytes: number[] = []
  let rest = value
  do {
    bytes.unshift(rest % 256)
    rest = Math.floor(rest / 256)
  } while (rest > 0)
  return Buffer.from(bytes)
}

function float64(value: number): Buffer {
  const bytes = Buffer.alloc(8)
  bytes.writeDoubleBE(value)
  return bytes
}

/** The VP8 key frame inside a lossy WebP file (its `VP8 ` chunk). */
function vp8Frame(webp: Buffer): Buffer {
  let offset = 12
  while (offset + 8 <= webp.length) {
    const fourcc = webp.toString('latin1', offset, offset + 4)
    const size = webp.readUInt32LE(offset + 4)
    if (fourcc === 'VP8 ') return webp.subarray(offset + 8, offset + 8 + size)
    offset += 8 + size + (size % 2)
  }
  throw new Error('the WebP has no VP8 frame')
}

interface Clip {
  width: number
  height: number
  fps: number
  frames: Buffer[]
}

/** The frames of the catalog's video model, re-encoded as VP8 key frames. */
async function clip(prompt: string, seed: number): Promise<Clip> {
  const fps = 12
  const result = await runModel(
    'atelier/text-to-video',
    { prompt, width: 320, height: 256, duration_seconds: 2, fps, seed },
    { seed },
  )
  if (!result.ok || !result.files[0]) throw new Error(`could not render the clip "${prompt}"`)
  const animation = result.files[0].bytes
  const { pages = 1, width, pageHeight = 256 } = await sharp(animation).metadata()
  const frames: Buffer[] = []
  for (let page = 0; page < pages; page++) {
    const webp = await sharp(animation, { page }).removeAlpha().webp({ quality: 70 }).toBuffer()
    frames.push(vp8Frame(webp))
  }
  return { width, height: pageHeight, fps, frames }
}

/** Matroska counts DateUTC in nanoseconds from 2001-01-01. */
const MATROSKA_EPOCH_MS = Date.UTC(2001, 0, 1)

function webm(source: Clip, title: string, createdMs: number): Buffer {
  const frameMs = 1000 / source.fps
  const header = element(
    [0x1a, 0x45, 0xdf, 0xa3],
    element([0x42, 0x86], uint(1)),
    element([0x42, 0xf7], uint(1)),
    element([0x42, 0xf2], uint(4)),
    element([0x42, 0xf3], uint(8)),
    element([0x42, 0x82], Buffer.from('webm')),
    element([0x42, 0x87], uint(2)),
    element([0x42, 0x85], uint(2)),
  )
  const date = Buffer.alloc(8)
  date.writeBigInt64BE(BigInt(createdMs - MATROSKA_EPOCH_MS) * 1_000_000n)
  const info = element(
    [0x15, 0x49, 0xa9, 0x66],
    element([0x2a, 0xd7, 0xb1], uint(1_000_000)),
    element([0x44, 0x89], float64(source.frames.length * frameMs)),
    element([0x44, 0x61], date),
    element([0x7b, 0xa9], Buffer.from(title)),
    element([0x4d, 0x80], Buffer.from('Atelier sandbox')),
    element([0x57, 0x41], Buffer.from('Atelier sandbox')),
  )
  const tracks = element(
    [0x16, 0x54, 0xae, 0x6b],
    element(
      [0xae],
      element([0xd7], uint(1)),
      element([0x73, 0xc5], uint(1)),
      element([0x83], uint(1)),
      element([0x9c], uint(0)),
      element([0x86], Buffer.from('V_VP8')),
      element([0x23, 0xe3, 0x83], uint(Math.round(frameMs * 1_000_000))),
      element([0xe0], element([0xb0], uint(source.width)), element([0xba], uint(source.height))),
    ),
  )
  const blocks = source.frames.map((frame, index) => {
    const head = Buffer.alloc(4)
    head[0] = 0x81
    head.writeInt16BE(Math.round(index * frameMs), 1)
    head[3] = 0x80
    return element([0xa3], head, frame)
  })
  const cluster = element([0x1f, 0x43, 0xb6, 0x75], element([0xe7], uint(0)), ...blocks)
  return Buffer.concat([header, element([0x18, 0x53, 0x80, 0x67], info, tracks, cluster)])
}

// ---- per-asset variants of still images ----

/** A PNG with `tEXt` chunks (Title, Creation Time) after its header, as editors write them. */
function pngWithText(png: Buffer, entries: Record<string, string>): Buffer {
  const ihdrEnd = 8 + 8 + png.readUInt32BE(8) + 4
  const chunks = Object.entries(entries).map(([keyword, text]) => {
    const data = Buffer.from(`${keyword}\0${text}`, 'latin1')
    const chunk = Buffer.alloc(12 + data.length)
    chunk.writeUInt32BE(data.length, 0)
    chunk.write('tEXt', 4, 'latin1')
    data.copy(chunk, 8)
    chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length)
    return chunk
  })
  return Buffer.concat([png.subarray(0, ihdrEnd), ...chunks, png.subarray(ihdrEnd)])
}

/** A JPEG with a comment (COM) segment after its APPn segments. */
function jpegWithComment(bytes: Buffer, comment: string): Buffer {
  let offset = 2
  while (offset + 4 <= bytes.length && bytes[offset] === 0xff) {
    const marker = bytes[offset + 1] ?? 0
    if (marker < 0xe0 || marker > 0xef) break
    offset += 2 + bytes.readUInt16BE(offset + 2)
  }
  const text = Buffer.from(comment, 'utf8').subarray(0, 60_000)
  const segment = Buffer.alloc(4 + text.length)
  segment[0] = 0xff
  segment[1] = 0xfe
  segment.writeUInt16BE(2 + text.length, 2)
  text.copy(segment, 4)
  return Buffer.concat([bytes.subarray(0, offset), segment, bytes.subarray(offset)])
}

const SAMPLE_SPECS: readonly SampleSpec[] = [
  {
    kind: 'photo',
    stems: ['sunset-hero', 'sea-study', 'coast-wide'],
    format: 'jpeg',
    render: () => jpeg(picture('a red sunset over the sea', 'abstract', 640, 480, 3)),
  },
  {
    kind: 'photo',
    stems: ['forest-dawn', 'mist-study', 'walk-in-the-woods'],
    format: 'jpeg',
    render: () => jpeg(picture('misty green forest at dawn', 'gradient', 480, 640, 5)),
  },
  {
    kind: 'photo',
    stems: ['wheat-field', 'harvest', 'summer-sky'],
    format: 'jpeg',
    render: () => jpeg(picture('golden wheat field under blue sky', 'studio', 768, 432, 8)),
  },
  {
    kind: 'photo',
    stems: ['lookbook', 'look', 'model-shot'],
    format: 'jpeg',
    render: () => jpeg(picture('navy and orange abstract shapes', 'abstract', 512, 640, 21)),
  },
  {
    kind: 'graphic',
    stems: ['pattern-teal', 'geometry', 'poster-grid'],
    format: 'png',
    render: () => picture('teal geometry', 'geometric', 512, 512, 42),
  },
  {
    kind: 'graphic',
    stems: ['texture-grain', 'paper', 'backdrop'],
    format: 'png',
    render: () => picture('soft pink and violet grain', 'gradient', 384, 384, 17),
  },
  {
    kind: 'graphic',
    stems: ['menu-board', 'poster', 'palette'],
    format: 'png',
    render: () => picture('a yellow and brown coffee poster', 'geometric', 384, 512, 31),
  },
  {
    kind: 'cutout',
    stems: ['bottle-front', 'packshot', 'bottle-side'],
    format: 'png',
    render: cutout,
  },
]

const CLIP_SPECS: readonly { prompt: string; seed: number; stems: readonly string[] }[] = [
  { prompt: 'blue bubbles drifting', seed: 11, stems: ['loop-bubbles', 'background-loop'] },
  { prompt: 'green waves rolling', seed: 5, stems: ['waves', 'story-intro'] },
]

async function inspected(
  services: SandboxServices,
  bytes: Buffer,
  contentType: string,
): Promise<{ inspection: Inspection; thumbnail: ThumbnailInfo | null }> {
  const path = services.blobs.stagingPath(`history-sample-${randomUUID()}`)
  writeFileSync(path, bytes)
  try {
    const inspection = await inspectFile(path, bytes.length, contentType)
    if (inspection.status_code !== 'ready') throw new Error('a history sample does not decode')
    const thumbnail = inspection.thumbnail
      ? {
          sha256: services.blobs.put(inspection.thumbnail.bytes).sha256,
          content_type: THUMBNAIL_TYPE,
          width: inspection.thumbnail.width,
          height: inspection.thumbnail.height,
        }
      : null
    return { inspection, thumbnail }
  } finally {
    rmSync(path, { force: true })
  }
}

/**
 * Renders the samples once and inspects each the way a confirmed upload is inspected: the assets
 * made from one share its size, metadata and thumbnail, as files that differ only in their
 * embedded title do.
 */
async function buildSamples(services: SandboxServices): Promise<Sample[]> {
  const samples: Sample[] = []
  for (const spec of SAMPLE_SPECS) {
    const bytes = await spec.render()
    const contentType = spec.format === 'png' ? 'image/png' : 'image/jpeg'
    const { inspection, thumbnail } = await inspected(services, bytes, contentType)
    samples.push({
      kind: spec.kind,
      stems: spec.stems,
      extension: spec.format === 'png' ? 'png' : 'jpg',
      contentType,
      inspection,
      thumbnail,
      variant: (title, createdMs) =>
        spec.format === 'png'
          ? pngWithText(bytes, { Title: title, 'Creation Time': isoTime(createdMs) })
          : jpegWithComment(bytes, `${title} (${isoTime(createdMs)})`),
    })
  }
  for (const spec of CLIP_SPECS) {
    const source = await clip(spec.prompt, spec.seed)
    const { inspection, thumbnail } = await inspected(
      services,
      webm(source, spec.stems[0] ?? 'clip', Date.UTC(2020, 0, 1)),
      'video/webm',
    )
    samples.push({
      kind: 'video',
      stems: spec.stems,
      extension: 'webm',
      contentType: 'video/webm',
      inspection,
      thumbnail,
      variant: (title, createdMs) => webm(source, title, createdMs),
    })
  }
  return samples
}

// ---- the folder tree ----

interface PlannedFolder {
  record: AssetFolder
  createdMs: number
  kinds: readonly Kind[] | undefined
  weight: number
}

const day = (ms: number): string => isoTime(ms).slice(0, 10)

/** How many folders a library of `assets` assets has: a few for a few, the whole tree for many. */
function folderCount(assets: number): { tree: number; shoots: number } {
  if (assets === 0) return { tree: 0, shoots: 0 }
  return {
    tree: Math.min(TREE.length, Math.max(3, Math.ceil(assets / 6))),
    shoots: assets >= 200 ? Math.min(120, Math.floor(assets / 40)) : 0,
  }
}

function planFolders(
  orgId: string,
  assets: number,
  startMs: number,
  endMs: number,
  random: () => number,
): PlannedFolder[] {
  const { tree, shoots } = folderCount(assets)
  const byPath = new Map<string, PlannedFolder>()
  const planned: PlannedFolder[] = []
  const add = (
    parentPath: string,
    name: string,
    createdMs: number,
    kinds: readonly Kind[] | undefined,
    weight: number,
  ) => {
    const parent = byPath.get(parentPath) ?? null
    const time = isoTime(createdMs)
    const record: AssetFolder = {
      id: uuidv7(createdMs),
      org_id: orgId,
      parent_id: parent ? parent.record.id : null,
      name,
      path: `${parent ? parent.record.path : ''}/${name}`,
      created_at: time,
      updated_at: time,
      deleted_at: null,
    }
    const folder = { record, createdMs, kinds, weight }
    byPath.set(record.path, folder)
    planned.push(folder)
  }
  for (const entry of TREE.slice(0, tree)) {
    const slash = entry.path.lastIndexOf('/')
    const parentPath = entry.path.slice(0, slash)
    const parent = byPath.get(parentPath)
    // A library is organised early on: each folder within a few days of its parent.
    const from = parent ? parent.createdMs + 60_000 : startMs
    const createdMs = Math.min(from + Math.floor(random() * (endMs - startMs) * 0.05), endMs)
    add(parentPath, entry.path.slice(slash + 1), createdMs, entry.kinds, entry.weight)
  }
  const shootsParent = byPath.get(SHOOTS_PARENT)
  if (shootsParent && shoots > 0) {
    // One folder per shoot day, named after its day (so the names never clash).
    const days = new Map<string, number>()
    for (let attempt = 0; days.size < shoots && attempt < shoots * 20; attempt++) {
      const at = shootsParent.createdMs + Math.floor(random() * (endMs - shootsParent.createdMs))
      if (!days.has(day(at))) days.set(day(at), at)
    }
    for (const [date, at] of [...days].sort((a, b) => a[1] - b[1])) {
      add(SHOOTS_PARENT, `Shoot ${date}`, at, ['photo', 'cutout'], 2)
    }
  }
  return planned
}

function pickWeighted<T>(items: readonly T[], weightOf: (item: T) => number, draw: number): T {
  const total = items.reduce((sum, item) => sum + weightOf(item), 0)
  let rest = draw * total
  for (const item of items) {
    rest -= weightOf(item)
    if (rest < 0) return item
  }
  return items[items.length - 1] as T
}

/**
 * Fills an organization's media library: a folder tree a few levels deep (campaigns, clients,
 * references, video, dated shoots) and `count` assets spread across it over the last 90 days,
 * images mostly (photos as JPEG, graphics and cut-outs as PNG), some WebM clips. Each asset has
 * its own bytes in the blob store — a sample rendered once, made unique by an embedded title and
 * timestamp as real files are, so the duplicate rule (one live asset per sha256) holds — and the
 * confirmed upload it came from; images share their sample's thumbnail. Records are exactly what
 * a confirmed upload creates. Rows go in with one prepared INSERT in large transactions.
 */
export async function seedAssets(
  services: SandboxServices,
  orgId: string,
  count: number,
): Promise<AssetsSummary> {
  if (count <= 0) return { assets: 0, folders: 0, bytes: 0 }
  const { random, blobs, db } = services
  const samples = await buildSamples(services)
  const now = services.clock()
  const startMs = now - WINDOW_MS
  const endMs = now - 60_000
  const folders = planFolders(orgId, count, startMs, endMs, random)
  const holders = folders.filter((folder) => folder.weight > 0)
  const stills = samples.filter((sample) => sample.kind !== 'video')
  const videos = samples.filter((sample) => sample.kind === 'video')
  const homes = new Map<Kind, PlannedFolder[]>()
  for (const sample of samples) {
    homes.set(
      sample.kind,
      holders.filter((f) => !f.kinds || f.kinds.includes(sample.kind)),
    )
  }

  // Each asset: a sample, a folder that takes its kind, and a time after the folder was made.
  const planned = Array.from({ length: count }, () => {
    const sample =
      random() < VIDEO_SHARE && videos.length > 0
        ? pickWeighted(videos, () => 1, random())
        : pickWeighted(stills, () => 1, random())
    const fitting = homes.get(sample.kind) ?? []
    const folder =
      random() < ROOT_SHARE || fitting.length === 0
        ? null
        : pickWeighted(fitting, (f) => f.weight, random())
    const from = folder ? folder.createdMs + 60_000 : startMs
    return { sample, folder, createdMs: from + Math.floor(random() * Math.max(0, endMs - from)) }
  })
  planned.sort((a, b) => a.createdMs - b.createdMs)
  // Strictly increasing times: the embedded timestamp is what makes each file's bytes its own.
  for (let i = 1; i < planned.length; i++) {
    const previous = planned[i - 1]?.createdMs ?? 0
    const entry = planned[i]
    if (entry && entry.createdMs <= previous) entry.createdMs = previous + 1
  }

  const insert = db.prepare(
    `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  db.transaction(() => {
    for (const { record } of folders) {
      insert.run(
        FOLDERS,
        record.id,
        orgId,
        record.parent_id,
        record.created_at,
        record.updated_at,
        JSON.stringify(record),
      )
    }
  })()

  const sequence = new Map<string, number>()
  let bytesWritten = 0
  const writeAsset = (entry: (typeof planned)[number]) => {
    const { sample, folder, createdMs } = entry
    const stem =
      sample.stems[Math.floor(random() * sample.stems.length)] ?? sample.stems[0] ?? 'file'
    const n = (sequence.get(stem) ?? 0) + 1
    sequence.set(stem, n)
    const filename = `${stem}-${String(n).padStart(3, '0')}.${sample.extension}`
    const bytes = sample.variant(filename, createdMs)
    const { sha256, size } = blobs.put(bytes)
    bytesWritten += size
    const etag = `"${createHash('md5').update(bytes).digest('hex')}"`
    const folderId = folder ? folder.record.id : null
    const startedMs = createdMs - 200 - Math.floor(random() * UPLOAD_MS)
    const started = isoTime(startedMs)
    const confirmed = isoTime(createdMs)
    const uploadId = uuidv7(startedMs)
    const assetId = uuidv7(createdMs)
    const expiresAt = startedMs + UPLOAD_TTL_MS
    const partExpiresMs = Math.floor((startedMs + PART_URL_TTL_MS) / 1000) * 1000
    const upload: AssetUpload = {
      id: uploadId,
      org_id: orgId,
      filename,
      content_type: sample.contentType,
      size_bytes: size,
      sha256,
      folder_id: folderId,
      part_size: DEFAULT_PART_SIZE,
      asset_id: assetId,
      created_at: started,
      updated_at: confirmed,
      status_code: 'confirmed',
      part_count: 1,
      parts: [
        {
          part_number: 1,
          url: blobs.presign(
            services.config.baseUrl,
            `/_storage/uploads/${uploadId}/parts/1`,
            partExpiresMs,
          ),
          expires_at: isoTime(partExpiresMs),
          received: true,
          etag,
        },
      ],
      expires_at: isoTime(expiresAt),
      duplicate_of_asset_id: null,
    }
    const asset = confirmedAsset({
      id: assetId,
      orgId,
      folderId,
      name: filename,
      inspection: sample.inspection,
      size,
      sha256,
      upload: { id: uploadId, filename },
      thumbnail: sample.thumbnail ?? null,
      at: confirmed,
    })
    insert.run(UPLOADS, uploadId, orgId, null, started, confirmed, JSON.stringify(upload))
    insert.run(ASSETS, assetId, orgId, folderId, confirmed, confirmed, JSON.stringify(asset))
  }
  const batch = db.transaction((from: number, to: number) => {
    for (let index = from; index < to; index++) {
      const entry = planned[index]
      if (entry) writeAsset(entry)
    }
  })
  for (let from = 0; from < count; from += BATCH) batch(from, Math.min(count, from + BATCH))
  return { assets: count, folders: folders.length, bytes: bytesWritten }
}
