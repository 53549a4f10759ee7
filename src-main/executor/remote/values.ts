import { createHash } from 'node:crypto'
import type { MediaRef, PortValue } from '../types'

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function isMediaRef(value: unknown): value is MediaRef {
  return (
    isRecord(value) &&
    value.kind === 'media' &&
    typeof value.sha256 === 'string' &&
    typeof value.content_type === 'string' &&
    typeof value.url === 'string'
  )
}

/**
 * JSON with object keys sorted at every level and `undefined` members left out, so two equal
 * values always give the same text whatever order their keys were built in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`
  }
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`
  }
  const type = typeof value
  if (value === null || type === 'string' || type === 'number' || type === 'boolean') {
    return JSON.stringify(value)
  }
  // Not JSON (undefined in a list, a function): as JSON.stringify writes it in a list.
  return 'null'
}

/**
 * What the inputs hash sees of a value: media by content alone, so a fresh presigned URL for the
 * same bytes (minted at every read) does not make the same work look new.
 */
function byContent(value: PortValue): unknown {
  if (isMediaRef(value)) return { media_sha256: value.sha256 }
  if (Array.isArray(value)) return value.map(byContent)
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, byContent(child)]))
  }
  return value
}

/** sha256 (hex) of the canonical JSON of the resolved inputs, media named by their sha256. */
export function inputsHash(inputs: Record<string, PortValue>): string {
  return createHash('sha256')
    .update(canonicalJson(byContent(inputs)))
    .digest('hex')
}
