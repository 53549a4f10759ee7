import type { ContractSchemas, Json } from './schemas'

/** Whether a parameter's schema is a UUID (by format, or by a pattern of hex groups). */
export function isUuidSchema(schemas: ContractSchemas, schema: Json): boolean {
  const resolved = schemas.resolve(schema)
  const pattern = typeof resolved.pattern === 'string' ? resolved.pattern : ''
  return resolved.format === 'uuid' || pattern.includes('[0-9a-fA-F]{8}')
}

/**
 * The same UUID spelled with the letters a mask picks in upper case: the contract's patterns
 * and the uuid format admit both cases, so it names the same record.
 */
export function recase(value: string, mask: boolean[]): string {
  return value.replace(/[a-z]/g, (char, index: number) =>
    mask[index % Math.max(mask.length, 1)] ? char.toUpperCase() : char,
  )
}
