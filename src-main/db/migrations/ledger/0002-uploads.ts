import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

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

export const uploadManifests: Migration = {
  version: 2,
  name: 'upload manifests, files and parts',
  up: V2_UPLOADS,
}
