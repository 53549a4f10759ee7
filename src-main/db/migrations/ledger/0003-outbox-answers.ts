import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V3_OUTBOX_ANSWERS = `
  -- The service's error code of the last failure or refusal, next to its message, so the user
  -- sees the service's own words and a script can tell a conflict from a missing record.
  ALTER TABLE outbox ADD COLUMN last_error_code TEXT;
  -- The local id (local:<uuid>) a create hands out before the service has given the record its
  -- own, so later writes made offline can point at it (an asset moved into a new folder).
  ALTER TABLE outbox ADD COLUMN placeholder_id TEXT;
  -- What the service answered for a sent write: the id it gave a created record (what the
  -- placeholder stands for from then on) and the record's updated_at (the base the next edit
  -- of the same record made offline was built on).
  ALTER TABLE outbox ADD COLUMN result_id TEXT;
  ALTER TABLE outbox ADD COLUMN result_updated_at TEXT;
  CREATE UNIQUE INDEX outbox_by_placeholder ON outbox (placeholder_id)
    WHERE placeholder_id IS NOT NULL;
`

export const outboxAnswers: Migration = {
  version: 3,
  name: 'outbox error codes, placeholders and answers',
  up: V3_OUTBOX_ANSWERS,
}
