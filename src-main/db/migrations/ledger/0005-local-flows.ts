import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V5_LOCAL_FLOWS = `
  -- Flows made and edited on this machine (the flow editor's own work). The service never had
  -- them, so a rebuilt mirror must not take them along: they live here. name, description and
  -- node_count repeat the flow file's, so the list reads no flow file; flow_json is the whole
  -- flow file, its id the row's.
  CREATE TABLE local_flows (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    node_count INTEGER NOT NULL,
    flow_json TEXT NOT NULL CHECK (json_valid(flow_json)),
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    -- In the trash since then; restoring clears it.
    deleted_ms INTEGER
  ) STRICT;
  CREATE INDEX local_flows_by_scope ON local_flows (profile, org_id, updated_ms)
    WHERE deleted_ms IS NULL;
  CREATE INDEX local_flows_trash ON local_flows (deleted_ms) WHERE deleted_ms IS NOT NULL;

  -- Named versions of a local flow, numbered from 1 per flow; never changed once written.
  CREATE TABLE local_flow_versions (
    flow_id TEXT NOT NULL REFERENCES local_flows (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    flow_json TEXT NOT NULL CHECK (json_valid(flow_json)),
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (flow_id, version)
  ) STRICT, WITHOUT ROWID;
`

export const localFlows: Migration = {
  version: 5,
  name: 'local flows and their versions',
  up: V5_LOCAL_FLOWS,
}
