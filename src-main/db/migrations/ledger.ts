import type { Migration } from '../migrate'

/**
 * The ledger's schema: what only this machine knows and the service cannot give back — run
 * intents, upload manifests, the outbox of offline writes. Nothing here is ever rebuilt or
 * dropped to make room; a step that reshapes a table copies every row.
 *
 * Append-only. Never edit a step that has shipped; add a new one at the end.
 *
 * State columns are plain text checked by the repositories, except the outbox's, whose three
 * states are the contract of replay: a CHECK there costs a rebuild to extend, elsewhere it would
 * only slow the executor and the uploader down when they grow a state.
 */

const V1_INTENTS_AND_OUTBOX = `
  -- A paid run we mean to start, committed before the request leaves, so a crash or a lost
  -- answer can never lead to paying twice: the next start looks the run up by its key first.
  CREATE TABLE intents (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    -- The local flow run and node this run is for; null for a run started on its own.
    flow_run_id TEXT,
    node_id TEXT,
    target_type_code TEXT NOT NULL,
    -- The model slug, flow id or workflow id the request goes to.
    target_ref TEXT NOT NULL,
    inputs_hash TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    -- The exact body sent, so a retry after a crash sends the same bytes with the same key.
    request_json TEXT NOT NULL CHECK (json_valid(request_json)),
    remote_run_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    last_error TEXT
  ) STRICT;
  CREATE INDEX intents_by_node ON intents (flow_run_id, node_id, created_ms);
  CREATE INDEX intents_by_inputs ON intents (target_ref, inputs_hash, state);
  CREATE INDEX intents_by_remote_run ON intents (remote_run_id) WHERE remote_run_id IS NOT NULL;
  CREATE INDEX intents_open ON intents (profile, org_id, created_ms)
    WHERE state IN ('prepared', 'sending', 'dispatched');

  -- Writes made while the service was out of reach, replayed in seq order. AUTOINCREMENT so a
  -- seq is never reused after old entries are purged: it is the entry's identity and its place.
  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    -- The record the write is about (an evaluation for feedback…), to show it as pending there.
    subject_id TEXT,
    payload TEXT NOT NULL CHECK (json_valid(payload)),
    -- Sent with every replay of this entry, so a replay whose answer was lost is harmless.
    idempotency_key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'rejected', 'sent')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    sent_ms INTEGER
  ) STRICT;
  CREATE INDEX outbox_pending ON outbox (profile, org_id, seq) WHERE state = 'pending';
  CREATE INDEX outbox_by_state ON outbox (state, seq);
  CREATE INDEX outbox_by_subject ON outbox (subject_id, seq) WHERE subject_id IS NOT NULL;
`

const V2_UPLOADS = `
  -- One folder the user picked or dropped, uploaded into an asset folder.
  CREATE TABLE upload_manifests (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    root_path TEXT NOT NULL,
    -- The asset folder that receives the root; null for the organization's root.
    target_folder_id TEXT,
    state TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    finished_ms INTEGER,
    last_error TEXT
  ) STRICT;
  CREATE INDEX upload_manifests_by_state ON upload_manifests (state, created_ms);

  -- One file of a manifest. size and mtime tell whether the file changed since it was hashed;
  -- upload_id and the finished parts let an interrupted upload resume instead of starting over.
  CREATE TABLE upload_files (
    seq INTEGER PRIMARY KEY,
    manifest_id TEXT NOT NULL REFERENCES upload_manifests (id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    mtime_ms INTEGER NOT NULL,
    sha256 TEXT,
    content_type TEXT,
    folder_id TEXT,
    upload_id TEXT,
    upload_expires_ms INTEGER,
    part_size INTEGER,
    part_count INTEGER,
    asset_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    updated_ms INTEGER NOT NULL,
    UNIQUE (manifest_id, relative_path)
  ) STRICT;
  CREATE INDEX upload_files_by_state ON upload_files (manifest_id, state, seq);
  CREATE INDEX upload_files_by_sha256 ON upload_files (sha256) WHERE sha256 IS NOT NULL;

  -- A part storage accepted (its ETag is what the confirmation sends back).
  CREATE TABLE upload_parts (
    file_seq INTEGER NOT NULL REFERENCES upload_files (seq) ON DELETE CASCADE,
    part_number INTEGER NOT NULL,
    size_bytes INTEGER NOT NULL,
    etag TEXT NOT NULL,
    finished_ms INTEGER NOT NULL,
    PRIMARY KEY (file_seq, part_number)
  ) STRICT, WITHOUT ROWID;

  -- Parts belong to one upload of the service: a new upload (the old one expired, or the file
  -- changed and was listed again) starts from no parts.
  CREATE TRIGGER upload_files_new_upload AFTER UPDATE OF upload_id ON upload_files
  WHEN old.upload_id IS NOT new.upload_id BEGIN
    DELETE FROM upload_parts WHERE file_seq = new.seq;
  END;
`

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

const V6_NAMED_FILES = `
  -- 1 when the manifest's latest upload named some files of its folder (files dropped on the
  -- window) instead of taking the whole folder: resuming it after a restart sends those files
  -- again, never the rest of the folder, which the person did not pick.
  ALTER TABLE upload_manifests ADD COLUMN files_only INTEGER NOT NULL DEFAULT 0;
`

export const LEDGER_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'run intents and the outbox', up: V1_INTENTS_AND_OUTBOX },
  { version: 2, name: 'upload manifests, files and parts', up: V2_UPLOADS },
  { version: 3, name: 'outbox error codes, placeholders and answers', up: V3_OUTBOX_ANSWERS },
  { version: 4, name: 'flow runs and their node runs', up: V4_FLOW_RUNS },
  { version: 5, name: 'local flows and their versions', up: V5_LOCAL_FLOWS },
  { version: 6, name: 'uploads of named files', up: V6_NAMED_FILES },
]
