import type { StoredRecord } from './types'

/**
 * A record with its timestamps: new (`now` twice), kept as stored, or renewed when it changed.
 * Flows and workflows both keep their parts' timestamps this way: an untouched record keeps its
 * updated_at, so incremental sync does not fetch it again.
 */
export function stampRecord<T extends object>(
  before: StoredRecord | undefined,
  now: string,
  build: (createdAt: string, updatedAt: string) => T,
): T {
  if (!before) return build(now, now)
  const kept = build(before.created_at, before.updated_at)
  return JSON.stringify(kept) === JSON.stringify(before) ? kept : build(before.created_at, now)
}
