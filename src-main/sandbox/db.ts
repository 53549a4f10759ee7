import type Database from 'better-sqlite3'
import { openSqlite } from '../native'

/**
 * The sandbox's own database. Every record of the service lives in one `records` table as JSON
 * (the list engine filters and sorts on it generically); what needs real constraints —
 * organizations, keys, idempotency — has its own tables.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE records (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    org_id TEXT,
    parent_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT,
    doc TEXT NOT NULL,
    PRIMARY KEY (collection, id)
  ) STRICT;
  CREATE INDEX records_by_created ON records(collection, org_id, created_at, id);
  CREATE INDEX records_by_updated ON records(collection, org_id, updated_at, id);
  CREATE INDEX records_by_parent ON records(collection, parent_id, created_at, id);

  CREATE TABLE orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    balance_micro INTEGER NOT NULL,
    currency_code TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    key_hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE memberships (
    key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    PRIMARY KEY (key_id, org_id)
  ) STRICT;

  CREATE TABLE idempotency (
    org_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    record_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, scope, key)
  ) STRICT;
  `,
  // Uploads ask for the asset with a sha256 up to three times per file: without an index each
  // question read every asset, so a folder of n files cost n² reads.
  `
  CREATE INDEX records_by_sha256 ON records(collection, org_id, json_extract(doc, '$.sha256'))
    WHERE json_extract(doc, '$.sha256') IS NOT NULL;
  `,
]

export type SandboxDb = Database.Database

export function openSandboxDb(file: string): SandboxDb {
  const db = openSqlite(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  const version = db.pragma('user_version', { simple: true }) as number
  if (version > MIGRATIONS.length) {
    db.close()
    throw new Error(
      `The sandbox data in ${file} was written by a newer Atelier (schema ${version}); use a newer Atelier or another --data folder.`,
    )
  }
  MIGRATIONS.slice(version).forEach((sql, index) => {
    db.transaction(() => {
      db.exec(sql)
      db.pragma(`user_version = ${version + index + 1}`)
    })()
  })
  return db
}
