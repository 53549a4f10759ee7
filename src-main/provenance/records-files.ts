import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import type { ProvenanceRecord } from '../../src-shared/domain/provenance'
import type { FlowDocument } from '../executor'
import type { MediaStore } from '../media-store'
import { embedProvenance, mediaTypeOf } from './index'
import { provenanceOfOutput, type RecordSources } from './records'
import { isMediaLike } from './records-values'

/**
 * An output as a file on the user's disk, with its record inside (issue 20): the bytes, the
 * name people see (`<flow-slug>-<output>-<n>.<ext>`), and whether a record could go in.
 *
 * Why a file of another type is written as it is, not refused: a video or a GIF is still the
 * output asked for; the caller says which files carry no record.
 */

/** What a media output is, as the executor and the service hand it over. */
export interface OutputMedia {
  sha256: string
  contentType: string
  /** Where the bytes can be fetched when this machine does not hold them (may have expired). */
  url: string | null
}

/** The media item of an output value (`index`: the item of a list); null when it is not media. */
export function outputMediaOf(value: unknown, index: number): OutputMedia | null {
  const item = Array.isArray(value) ? (value as unknown[])[index] : index === 0 ? value : undefined
  if (!isMediaLike(item)) return null
  const v = item as { sha256: string; content_type?: unknown; url?: unknown }
  return {
    sha256: v.sha256,
    contentType: typeof v.content_type === 'string' ? v.content_type : 'application/octet-stream',
    url: typeof v.url === 'string' && /^https?:\/\//.test(v.url) ? v.url : null,
  }
}

/** The output's bytes: the media store's copy, fetched (and checked by sha256) when missing. */
export async function outputBytes(
  media: Pick<MediaStore, 'stat' | 'download'>,
  output: OutputMedia,
): Promise<Buffer> {
  const stored = media.stat(output.sha256)
  if (stored) return readFile(stored.path)
  if (!output.url) {
    throw Object.assign(
      new Error(
        `The output ${output.sha256.slice(0, 12)}… is not on this machine and has no address to fetch it from; run the flow again to make it.`,
      ),
      { code: 'OUTPUT_UNAVAILABLE' },
    )
  }
  const fetched = await media.download(output.url, {
    expectedSha256: output.sha256,
    kind: 'output',
  })
  return readFile(fetched.path)
}

const RECORD_TYPES = new Set(['image/png', 'image/webp', 'image/jpeg'])

/** The bytes with the record inside when their type can carry one (PNG, WebP, JPEG). */
export function withRecord(
  bytes: Uint8Array,
  record: ProvenanceRecord | null,
): { bytes: Uint8Array; recorded: boolean } {
  const type = mediaTypeOf(bytes)
  if (!record || type === null || !RECORD_TYPES.has(type)) return { bytes, recorded: false }
  return { bytes: embedProvenance(bytes, record), recorded: true }
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'application/json': 'json',
  'text/plain': 'txt',
}

/** Lowercase words joined by dashes, ASCII only: safe in a file name on every system. */
export function slugOf(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '')
  return slug === '' ? 'output' : slug
}

/** The flow's slug, or one made from its name. */
export function flowSlugOf(flow: { slug?: unknown; name?: unknown }): string {
  if (typeof flow.slug === 'string' && flow.slug.trim() !== '') return slugOf(flow.slug)
  return slugOf(typeof flow.name === 'string' ? flow.name : 'flow')
}

/** `<flow-slug>-<output>-<n>.<ext>`, `n` counted from 1. */
export function outputFileName(
  flowSlug: string,
  output: string,
  n: number,
  mediaType: string,
): string {
  const ext = EXTENSIONS[mediaType.split(';')[0]?.trim() ?? ''] ?? 'bin'
  return `${flowSlug}-${slugOf(output)}-${n}.${ext}`
}

/** A file `writeOutputFiles` wrote. */
export interface WrittenOutput {
  path: string
  /** The flow output's name, and the item of a list (0 for a single value). */
  output: string
  index: number
  sha256: string
  mediaType: string
  /** False when the file's type cannot carry a record, or no record of it is known. */
  recorded: boolean
}

export interface FlowOutputsToWrite {
  sources: RecordSources
  media: Pick<MediaStore, 'stat' | 'download'>
  flow: FlowDocument
  flowRunId: string
  /** By flow output name, as the flow run gave them. */
  outputs: Record<string, unknown>
  dir: string
}

/**
 * Every media item of a flow run's outputs as a file in `dir`, one per output and per item of a
 * list, each with its record inside. A name that is taken is never overwritten: the next free
 * `-2`, `-3`… is used (created exclusively, so two writers cannot take the same name).
 */
export async function writeOutputFiles(request: FlowOutputsToWrite): Promise<WrittenOutput[]> {
  const { flow, dir } = request
  await mkdir(dir, { recursive: true })
  const flowSlug = flowSlugOf(flow)
  const written: WrittenOutput[] = []
  for (const [name, value] of Object.entries(request.outputs)) {
    const source = sourceOf(flow, name)
    const count = Array.isArray(value) ? value.length : 1
    for (let index = 0; index < count; index++) {
      const output = outputMediaOf(value, index)
      if (!output) continue
      const record = source
        ? provenanceOfOutput(request.sources, {
            flowRunId: request.flowRunId,
            nodeId: source.nodeId,
            output: source.output,
            index,
          })
        : null
      const { bytes, recorded } = withRecord(await outputBytes(request.media, output), record)
      const path = await writeFresh(
        dir,
        outputFileName(flowSlug, name, index + 1, output.contentType),
        bytes,
      )
      written.push({
        path,
        output: name,
        index,
        sha256: output.sha256,
        mediaType: output.contentType,
        recorded,
      })
    }
  }
  return written
}

/** The node output a flow output is filled from (`config.flow_outputs` of its node). */
function sourceOf(
  flow: FlowDocument,
  flowOutput: string,
): { nodeId: string; output: string } | null {
  for (const node of flow.nodes) {
    const mapping = (node.config as { flow_outputs?: Record<string, unknown> } | null)?.flow_outputs
    for (const [output, name] of Object.entries(mapping ?? {})) {
      if (name === flowOutput) return { nodeId: node.id, output }
    }
  }
  return null
}

async function writeFresh(dir: string, fileName: string, bytes: Uint8Array): Promise<string> {
  const ext = extname(fileName)
  const stem = fileName.slice(0, fileName.length - ext.length)
  for (let n = 1; ; n++) {
    const path = join(dir, n === 1 ? fileName : `${stem}-${n}${ext}`)
    try {
      await writeFile(path, bytes, { flag: 'wx' })
      return path
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error
    }
  }
}
