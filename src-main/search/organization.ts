import type { Mirror } from '../db'

export interface SyncedOrganization {
  orgId: string
  /** When a sync of it last finished a page, epoch ms. */
  lastSyncMs: number
}

/**
 * The organizations a profile has synced into the mirror, the most recently synced first. The
 * mirror knows this by itself (its sync cursors), so searching needs neither the service nor
 * the keychain: a profile's key is only needed to sync.
 */
export function syncedOrganizations(mirror: Mirror, profile: string): SyncedOrganization[] {
  const rows = mirror.db
    .prepare(
      `SELECT org_id, max(coalesce(last_sync_ms, updated_ms)) FROM sync_cursors
       WHERE profile = ? GROUP BY org_id ORDER BY 2 DESC, org_id`,
    )
    .raw()
    .all(profile) as [string, number][]
  return rows.map(([orgId, lastSyncMs]) => ({ orgId, lastSyncMs }))
}

/** The profiles that have synced anything into the mirror. */
export function syncedProfiles(mirror: Mirror): string[] {
  return mirror.db
    .prepare('SELECT DISTINCT profile FROM sync_cursors ORDER BY profile')
    .pluck()
    .all() as string[]
}
