import { createHash } from 'node:crypto'

/**
 * The creation/update time of every catalog record. Fixed, so the catalog is byte-identical across
 * restarts (same form as the sandbox clock's `isoTime`: milliseconds and a `+00:00` offset).
 */
export const CATALOG_TIMESTAMP = '2026-01-01T00:00:00.000+00:00'

/** RFC 4122 URL namespace, the parent of the sandbox's own namespace below. */
const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8'

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex')
}

function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** A name-based UUID, version 5 (SHA-1) of RFC 4122: the same namespace and name give the same id. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(uuidBytes(namespace))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16)
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80
  return formatUuid(hash)
}

/** The namespace of every id of the sandbox model catalog. */
export const CATALOG_NAMESPACE = uuidV5(URL_NAMESPACE, 'https://atelier.invalid/sandbox/models')

/**
 * The stable id of a catalog record, e.g. `catalogId('model', 'atelier/upscale')` or
 * `catalogId('input', 'atelier/upscale', 'scale')`.
 */
export function catalogId(kind: string, ...parts: (string | number)[]): string {
  return uuidV5(CATALOG_NAMESPACE, [kind, ...parts].join(':'))
}
