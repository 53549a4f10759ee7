import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V1_CACHE = `
  -- Records the organization owns. Keyed by the service id; org_id is the record's organization.
  -- seq is the rowid made explicit, so VACUUM cannot renumber what the FTS indexes point at. It
  -- is also the tie-breaker of every sort: each index entry carries the rowid anyway, so
  -- (org_id, created_ms) orders by (created_ms, seq) with no id stored in the index again.

  -- Every index slows every page down (a run is written far more often than a list is
  -- filtered): only the lists' filters are indexed. cost_micro, parent_run_id and
  -- idempotency_key are kept for filters and lookups on top of these (the executor finds
  -- runs by key through its ledger), and get an index in the step that first needs one.
  CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    status_code TEXT NOT NULL,
    target_type_code TEXT NOT NULL,
    source_code TEXT NOT NULL,
    model_slug TEXT,
    flow_id TEXT,
    wfengine_workflow_id TEXT,
    batch_id TEXT,
    parent_run_id TEXT,
    idempotency_key TEXT,
    cost TEXT,
    cost_micro INTEGER,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    completed_ms INTEGER,
    prompt TEXT,
    input_text TEXT,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX runs_by_created ON runs (org_id, created_ms);
  CREATE INDEX runs_by_status ON runs (org_id, status_code, created_ms);
  CREATE INDEX runs_by_model ON runs (org_id, model_slug, created_ms);
  CREATE INDEX runs_by_flow ON runs (flow_id, created_ms) WHERE flow_id IS NOT NULL;
  CREATE INDEX runs_by_batch ON runs (batch_id, created_ms) WHERE batch_id IS NOT NULL;

  CREATE TABLE node_runs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    flow_node_id TEXT,
    wfengine_node_id TEXT,
    status_code TEXT NOT NULL,
    cost TEXT,
    cost_micro INTEGER,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    started_ms INTEGER,
    completed_ms INTEGER,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX node_runs_by_run ON node_runs (run_id, created_ms);

  CREATE TABLE run_logs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node_run_id TEXT,
    level_code TEXT NOT NULL,
    message TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX run_logs_by_run ON run_logs (run_id, created_ms);

  -- json holds the whole delivery as received, attempts included; the attempt rows are an index
  -- of them (status, timing), so their bodies are not stored twice.
  CREATE TABLE run_callback_deliveries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    status_code TEXT NOT NULL,
    failure_reason_code TEXT,
    is_automatic INTEGER NOT NULL,
    attempt_count INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    completed_ms INTEGER,
    next_attempt_ms INTEGER,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX run_callback_deliveries_by_run ON run_callback_deliveries (run_id, created_ms);
  CREATE INDEX run_callback_deliveries_by_status ON run_callback_deliveries (org_id, status_code);

  CREATE TABLE delivery_attempts (
    seq INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES run_callback_deliveries (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    id TEXT,
    attempt_number INTEGER NOT NULL,
    status_code INTEGER,
    response_time_ms INTEGER,
    error_message TEXT,
    created_ms INTEGER NOT NULL,
    UNIQUE (delivery_id, position)
  ) STRICT;

  -- Every field of an evaluation is nullable in the contract; rows without an id are not kept.
  -- Judges and issues are an index of the evaluation's json, replaced with it on every write,
  -- and keyed by position because their ids may be null too.
  CREATE TABLE evaluations (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    run_id TEXT,
    model_id TEXT,
    status_code TEXT,
    overall_passed INTEGER,
    weighted_pass_rate REAL,
    feedback_is_positive INTEGER,
    cost TEXT,
    cost_micro INTEGER,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    completed_ms INTEGER,
    generation_prompt TEXT,
    notes TEXT,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX evaluations_by_created ON evaluations (org_id, created_ms);
  CREATE INDEX evaluations_by_status ON evaluations (org_id, status_code, created_ms);
  CREATE INDEX evaluations_by_verdict ON evaluations (org_id, overall_passed, created_ms);
  CREATE INDEX evaluations_by_run ON evaluations (run_id, created_ms) WHERE run_id IS NOT NULL;

  CREATE TABLE evaluation_judges (
    seq INTEGER PRIMARY KEY,
    evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    id TEXT,
    name TEXT,
    category TEXT,
    passed INTEGER,
    confidence REAL,
    weight REAL,
    reasoning TEXT,
    UNIQUE (evaluation_id, position)
  ) STRICT;

  CREATE TABLE evaluation_issues (
    seq INTEGER PRIMARY KEY,
    evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
    judge_position INTEGER NOT NULL,
    position INTEGER NOT NULL,
    id TEXT,
    judge_id TEXT,
    code TEXT,
    severity TEXT,
    description TEXT,
    UNIQUE (evaluation_id, judge_position, position)
  ) STRICT;
  CREATE INDEX evaluation_issues_by_severity ON evaluation_issues (severity, code);

  CREATE TABLE assets (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    folder_id TEXT,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    status_code TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    -- Local, never from the service: the downloaded thumbnail in the content-addressed store.
    thumbnail_sha256 TEXT,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX assets_by_created ON assets (org_id, created_ms);
  CREATE INDEX assets_by_folder ON assets (org_id, folder_id, created_ms);
  CREATE INDEX assets_by_sha256 ON assets (org_id, sha256);

  CREATE TABLE asset_folders (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    parent_id TEXT,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX asset_folders_by_parent ON asset_folders (org_id, parent_id, path);
  CREATE INDEX asset_folders_by_path ON asset_folders (org_id, path);

  -- Records several organizations can read (service-wide models, public flows…). org_id is the
  -- organization whose view was synced, and the key is (org_id, id), so switching organizations
  -- never shows one organization's view in another's. owner_org_id is the record's own org_id.

  CREATE TABLE models (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    owner_org_id TEXT,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    category_code TEXT,
    status_code TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id)
  ) STRICT;
  CREATE INDEX models_by_slug ON models (org_id, slug);
  CREATE INDEX models_by_name ON models (org_id, name);

  CREATE TABLE model_inputs (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    name TEXT NOT NULL,
    display_name TEXT,
    description TEXT,
    variable_type_code TEXT NOT NULL,
    is_required INTEGER NOT NULL,
    sort_order INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, model_id) REFERENCES models (org_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX model_inputs_by_model ON model_inputs (org_id, model_id, sort_order);

  CREATE TABLE model_outputs (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    name TEXT NOT NULL,
    variable_type_code TEXT NOT NULL,
    sort_order INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, model_id) REFERENCES models (org_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX model_outputs_by_model ON model_outputs (org_id, model_id, sort_order);

  CREATE TABLE model_pricing (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    pricing_model_code TEXT NOT NULL,
    model_input_id TEXT,
    price TEXT NOT NULL,
    price_micro INTEGER,
    currency_code TEXT NOT NULL,
    unit_code TEXT,
    sort_order INTEGER NOT NULL,
    disabled_ms INTEGER,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, model_id) REFERENCES models (org_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX model_pricing_by_model ON model_pricing (org_id, model_id, sort_order);

  CREATE TABLE flows (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    owner_org_id TEXT,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    status_code TEXT,
    visibility_code TEXT,
    version INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id)
  ) STRICT;
  CREATE INDEX flows_by_updated ON flows (org_id, updated_ms);
  CREATE INDEX flows_by_slug ON flows (org_id, slug);

  CREATE TABLE workflows (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    owner_org_id TEXT,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    status_code TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id)
  ) STRICT;
  CREATE INDEX workflows_by_name ON workflows (org_id, name);

  CREATE TABLE solutions (
    seq INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    slug TEXT NOT NULL,
    title TEXT NOT NULL,
    section_code TEXT,
    sort_order INTEGER NOT NULL,
    is_active INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (org_id, id)
  ) STRICT;
  CREATE INDEX solutions_by_title ON solutions (org_id, title);

  -- Reference tables (/v1/catalogs/*, run statuses, log levels, solution sections…), one row per
  -- (catalog, code); catalog is the path name, e.g. 'variable-types' or 'runs/log-levels'.
  CREATE TABLE catalog_records (
    org_id TEXT NOT NULL,
    catalog TEXT NOT NULL,
    code TEXT NOT NULL,
    display_name TEXT NOT NULL,
    sort_order INTEGER NOT NULL,
    is_active INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (org_id, catalog, code)
  ) STRICT, WITHOUT ROWID;

  -- Where each incremental sync stands: the newest (updated_at, id) written, in the service's own
  -- text so it goes back into q=updated_at>=… unchanged.
  CREATE TABLE sync_cursors (
    profile TEXT NOT NULL,
    org_id TEXT NOT NULL,
    collection TEXT NOT NULL,
    cursor_updated_at TEXT,
    cursor_id TEXT,
    last_sync_ms INTEGER,
    last_full_sync_ms INTEGER,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (profile, org_id, collection)
  ) STRICT, WITHOUT ROWID;
`

export const cacheTables: Migration = {
  version: 1,
  name: 'cache tables and sync cursors',
  up: V1_CACHE,
}
