import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

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

export const runIntentsAndOutbox: Migration = {
  version: 1,
  name: 'run intents and the outbox',
  up: V1_INTENTS_AND_OUTBOX,
}
