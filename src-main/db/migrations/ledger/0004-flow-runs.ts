import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V4_FLOW_RUNS = `
  -- A flow run of this machine's scheduler, kept for offline review and for resuming it.
  CREATE TABLE flow_runs (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    flow_id TEXT NOT NULL,
    flow_version INTEGER,
    inputs_json TEXT NOT NULL CHECK (json_valid(inputs_json)),
    state TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER,
    totals_json TEXT NOT NULL CHECK (json_valid(totals_json)),
    error_code TEXT,
    error_message TEXT
  ) STRICT;
  CREATE INDEX flow_runs_by_flow ON flow_runs (flow_id, started_ms);

  -- One run of one node in a flow run (a quality gate's retries are further attempts). A
  -- succeeded row's outputs are what the cache hands out for its cache_key.
  CREATE TABLE node_runs (
    flow_run_id TEXT NOT NULL REFERENCES flow_runs (id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    cache_key TEXT,
    state TEXT NOT NULL,
    outputs_json TEXT CHECK (outputs_json IS NULL OR json_valid(outputs_json)),
    cost_micro INTEGER NOT NULL DEFAULT 0,
    remote_run_id TEXT,
    batch_id TEXT,
    cached_from TEXT,
    error_code TEXT,
    error_message TEXT,
    queued_ms INTEGER,
    started_ms INTEGER,
    ended_ms INTEGER,
    PRIMARY KEY (flow_run_id, node_id, attempt)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX node_runs_by_cache_key ON node_runs (cache_key, ended_ms)
    WHERE state = 'succeeded';
`

export const flowRuns: Migration = {
  version: 4,
  name: 'flow runs and their node runs',
  up: V4_FLOW_RUNS,
}
