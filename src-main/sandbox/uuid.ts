/**
 * What the contract's `format: uuid` admits, exactly as the request validator (ajv-formats) reads
 * it: either case, optionally as a `urn:uuid:` URN. Records are stored under the lower-case form.
 */
const UUID = /^(?:urn:uuid:)?([0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})$/i

/**
 * The form an id is stored and answered in (lower case, no URN prefix), or undefined when the text
 * is not a UUID at all. Every way of writing one id must find the one record: a client that
 * upper-cases ids (Windows tools, some databases) would otherwise get a 404 for a record it has.
 */
export function canonicalUuid(text: string): string | undefined {
  return UUID.exec(text)?.[1]?.toLowerCase()
}
