import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.

const V6_NAMED_FILES = `
  -- 1 when the manifest's latest upload named some files of its folder (files dropped on the
  -- window) instead of taking the whole folder: resuming it after a restart sends those files
  -- again, never the rest of the folder, which the person did not pick.
  ALTER TABLE upload_manifests ADD COLUMN files_only INTEGER NOT NULL DEFAULT 0;
`

export const namedFileUploads: Migration = {
  version: 6,
  name: 'uploads of named files',
  up: V6_NAMED_FILES,
}
