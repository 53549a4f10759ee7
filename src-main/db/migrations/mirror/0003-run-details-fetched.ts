import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V3_RUN_DETAILS_FETCHED = `
  -- Which run's node runs, logs and callback deliveries were fetched, and at which updated_at of
  -- the run: details are listed per run, so the sync fetches them again only for a run that
  -- changed since (or that has not finished). A run without a row here has never had them
  -- fetched; they come when it is opened. Goes with its run.
  CREATE TABLE run_details_fetched (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    run_updated_ms INTEGER NOT NULL,
    fetched_ms INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
`

export const runDetailsFetched: Migration = {
  version: 3,
  name: 'run details fetched marker',
  up: V3_RUN_DETAILS_FETCHED,
}
