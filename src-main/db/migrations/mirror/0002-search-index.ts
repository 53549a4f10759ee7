import type { Migration } from '../../migrate'

// Released: never edit this file. Its SQL is hashed into every database it was applied to,
// and a changed step is refused on open (MIGRATION_CHANGED). Add a new step instead.
// The helper is part of this step and frozen with it: a later step that needs another index
// writes its own.

/**
 * An external-content FTS5 index over `table`: the indexed text is read from the table's own
 * columns by `seq`, so it is stored once and `snippet()` still works. Inserts and updates are
 * indexed by the repositories (see repositories/rows.ts for why not by triggers); deletions by
 * this trigger, so tombstones and foreign-key cascades can never leave an entry behind.
 * 'rebuild' indexes the rows written before this step.
 */
function ftsIndexV2(table: string, columns: readonly string[]): string {
  const fts = `${table}_fts`
  const list = columns.join(', ')
  const old = columns.map((c) => `old.${c}`).join(', ')
  return `
  CREATE VIRTUAL TABLE ${fts} USING fts5(
    ${list}, content='${table}', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER ${table}_fts_delete AFTER DELETE ON ${table} BEGIN
    INSERT INTO ${fts} (${fts}, rowid, ${list}) VALUES ('delete', old.seq, ${old});
  END;
  INSERT INTO ${fts} (${fts}) VALUES ('rebuild');`
}

const V2_SEARCH = [
  ftsIndexV2('runs', ['prompt', 'input_text']),
  ftsIndexV2('run_logs', ['message']),
  ftsIndexV2('evaluations', ['generation_prompt', 'notes']),
  ftsIndexV2('evaluation_judges', ['name', 'reasoning']),
  ftsIndexV2('evaluation_issues', ['code', 'description']),
  ftsIndexV2('assets', ['name']),
  ftsIndexV2('asset_folders', ['path']),
  ftsIndexV2('models', ['name', 'slug', 'description']),
  ftsIndexV2('model_inputs', ['name', 'display_name', 'description']),
  ftsIndexV2('flows', ['name', 'description']),
].join('\n')

export const searchIndex: Migration = { version: 2, name: 'full-text search index', up: V2_SEARCH }
