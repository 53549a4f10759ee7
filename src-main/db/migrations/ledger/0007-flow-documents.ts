import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V7_FLOW_DOCUMENTS = `
  -- The flow document each flow run ran, as it ran (the editor runs unsaved edits, the CLI runs
  -- files): what a picture's provenance record carries so the flow can be recreated exactly.
  -- Keyed by the sha256 of its JSON, so a hundred runs of one document store it once.
  CREATE TABLE flow_documents (
    sha256 TEXT PRIMARY KEY,
    flow_json TEXT NOT NULL CHECK (json_valid(flow_json))
  ) STRICT, WITHOUT ROWID;
  ALTER TABLE flow_runs ADD COLUMN document_sha256 TEXT REFERENCES flow_documents (sha256);

  -- The inputs a node run sent (seeds included, media as the executor's refs) and its seeds by
  -- input name, drawn or given: the record of an output names them, and a re-run from a
  -- picture sends the same seeds again. Null for node runs made before this step.
  ALTER TABLE node_runs ADD COLUMN inputs_json TEXT
    CHECK (inputs_json IS NULL OR json_valid(inputs_json));
  ALTER TABLE node_runs ADD COLUMN seeds_json TEXT
    CHECK (seeds_json IS NULL OR json_valid(seeds_json));
  -- A service run's record starts from the node run that made it.
  CREATE INDEX node_runs_by_remote_run ON node_runs (remote_run_id)
    WHERE remote_run_id IS NOT NULL;
`

export const flowDocuments: Migration = {
  version: 7,
  name: 'flow documents and node run inputs',
  up: V7_FLOW_DOCUMENTS,
}
