import { provenanceMediaSchema, type ProvenanceRecord } from '../../src-shared/domain/provenance'
import { CodedError } from '../errors/coded'
import { parseFlowDocument, type FlowDocument, type MediaRef } from '../executor'
import { readProvenance } from './index'

/**
 * Running again the flow that made a picture (issue 20, `atelier run picture.png`): the record's
 * flow with the record's flow inputs and every seed the flow run used, so that unchanged nodes
 * come from the cache (nothing dispatched, nothing paid) and, without the cache, the service is
 * asked for the same picture.
 *
 * Why media must be on this machine: the record names pictures by content only (no address
 * travels in a record), so a recorded input is sent from the media store's copy of those bytes.
 * One that is not here is refused with the input's name and how to give it, never replaced by
 * other bytes: that would not be the run the picture came from.
 */

export type RerunErrorCode =
  | 'PICTURE_WITHOUT_RECORD'
  | 'PICTURE_RECORD_DAMAGED'
  | 'PICTURE_RECORD_FOREIGN'
  | 'PICTURE_FLOW_INVALID'
  | 'PICTURE_INPUT_MISSING'

export class RerunError extends CodedError<RerunErrorCode> {
  override readonly name = 'RerunError'
}

export interface PictureRerun {
  flow: FlowDocument
  /** The recorded flow inputs, media as refs to this machine's copies. */
  inputs: Record<string, unknown>
  /** Every seed the flow run used, by node id then input name. */
  seeds: Record<string, Record<string, number>>
  /** Set when the picture was edited after it was made: its record is used, but said so. */
  warning: string | null
  record: ProvenanceRecord
}

/** The media store's file of these bytes, with its media type, when this machine holds them. */
export type LocalMedia = (sha256: string) => { path: string; contentType: string } | null

/** What running the picture's flow again takes; a `RerunError` when the picture cannot say. */
export function rerunOfPicture(bytes: Uint8Array, localMedia: LocalMedia): PictureRerun {
  const reading = readProvenance(bytes)
  switch (reading.state) {
    case 'none':
      throw new RerunError('PICTURE_WITHOUT_RECORD', reading.message)
    case 'damaged':
      throw new RerunError('PICTURE_RECORD_DAMAGED', reading.message)
    case 'foreign':
      throw new RerunError('PICTURE_RECORD_FOREIGN', reading.message)
    default:
      break
  }
  const { record } = reading
  const missing: string[] = []
  const local = (value: unknown, where: string): unknown => {
    const media = provenanceMediaSchema.safeParse(value)
    if (media.success) {
      const { sha256, media_type } = media.data.media
      const found = localMedia(sha256)
      if (!found) {
        missing.push(where)
        return null
      }
      const ref: MediaRef = {
        kind: 'media',
        sha256,
        content_type: media_type ?? found.contentType,
        url: found.path,
      }
      return ref
    }
    if (Array.isArray(value)) return value.map((item, i) => local(item, `${where}[${i}]`))
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, local(item, `${where}.${key}`)]),
      )
    }
    return value
  }
  const parsed = parseFlowDocument(local(record.flow, 'flow'))
  if (!parsed.ok) {
    throw new RerunError(
      'PICTURE_FLOW_INVALID',
      `The flow recorded in this picture cannot be read: ${parsed.problems
        .slice(0, 3)
        .map((problem) => problem.message)
        .join(' ')}`,
    )
  }
  const inputs = Object.fromEntries(
    Object.entries(record.flow_inputs).map(([name, value]) => [name, local(value, name)]),
  )
  if (missing.length > 0) {
    throw new RerunError(
      'PICTURE_INPUT_MISSING',
      `The picture was made from ${missing.length === 1 ? 'a picture' : 'pictures'} this machine does not hold (${missing.join(', ')}); give ${missing.length === 1 ? 'it' : 'them'} with --input name=@file.`,
    )
  }
  return {
    flow: parsed.flow,
    inputs,
    seeds: record.seeds,
    warning: reading.state === 'changed' ? reading.message : null,
    record,
  }
}
