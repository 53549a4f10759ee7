import type { Migration } from '../../migrate'

// Released once shipped: never edit this file. Its SQL is hashed into every database it was
// applied to, and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V4_MIRRORED_RECORDS = `
  -- One table for every collection that only needs to be listed and read back whole (batches,
  -- and whatever registers with mirrored() in sync/collections.ts next): a new screen needs no
  -- table, repository or step of its own. Keyed (collection, org_id, id), org_id being the
  -- organization synced, as the shared records are. listed_ms is created_at when the record has
  -- one, else updated_at: lists are newest first by it; updated_ms keeps an older copy from
  -- replacing a newer one.
  CREATE TABLE records (
    collection TEXT NOT NULL,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    listed_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (collection, org_id, id)
  ) STRICT, WITHOUT ROWID;

  -- The keyset list of one collection of one organization, newest first.
  CREATE INDEX records_by_listed ON records (collection, org_id, listed_ms DESC, id DESC);
`

export const mirroredRecords: Migration = {
  version: 4,
  name: 'mirrored records of any collection',
  up: V4_MIRRORED_RECORDS,
}
