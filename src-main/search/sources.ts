import type { SearchKind, SearchMatch } from '../../src-shared/domain/search'

/**
 * Where search words can match, and which record each match stands for. Every searchable table
 * has its own FTS5 index whose rowid is the table's seq (see the mirror's migration 2).
 */

export interface TextSource {
  /** The indexed table; its `<table>_fts` index covers `columns`, in this order. */
  table: string
  columns: readonly string[]
  /** Where a match in each column is said to be. */
  labels: readonly SearchMatch[]
}

/** An index whose rows are the records themselves, or hang off them (a log line, a judge). */
export interface IndexSource extends TextSource {
  kind: SearchKind
  /**
   * Joined to the matches `f` (their rowid as `f.id`): the record's table as `o`, and the
   * indexed table between them when it is another one.
   */
  joins: string
  /** The index row is the record's own row (its rowid is the record's seq). */
  direct: boolean
  /** How `joins` names the indexed table. */
  alias: string
  /** bm25 weight of each column. */
  columnWeights: readonly number[]
  /** How much a match here counts against a match in the record's own text. */
  weight: number
  /** This index's share of the candidates a search ranks (see CANDIDATES). */
  share: number
}

/** An index of things records point to (a model, a folder): a match finds their records. */
export interface LinkSource extends TextSource {
  kind: SearchKind
  /** The column of the record that names the matched row, and the matched row's key. */
  recordColumn: string
  key: string
  columnWeights: readonly number[]
  weight: number
  /** At most this many matched rows are followed, the best first. */
  follow: number
}

/**
 * How many matches a search ranks, at most, shared among the indexes it reads by their
 * `share`: enough to fill many pages, few enough to rank in a few milliseconds (a row read and
 * a score each). Runs alone: 667 by prompt and 333 by log line; every kind: 333 by prompt.
 */
export const CANDIDATES = 1000

export const INDEX_SOURCES: Record<SearchKind, readonly IndexSource[]> = {
  runs: [
    {
      kind: 'runs',
      table: 'runs',
      columns: ['prompt', 'input_text'],
      labels: ['prompt', 'input'],
      joins: 'CROSS JOIN runs o ON o.seq = f.id',
      direct: true,
      alias: 'o',
      columnWeights: [1, 0.5],
      weight: 1,
      share: 2,
    },
    {
      kind: 'runs',
      table: 'run_logs',
      columns: ['message'],
      labels: ['log'],
      joins: 'CROSS JOIN run_logs l ON l.seq = f.id CROSS JOIN runs o ON o.id = l.run_id',
      direct: false,
      alias: 'l',
      columnWeights: [1],
      weight: 0.6,
      share: 1,
    },
  ],
  evaluations: [
    {
      kind: 'evaluations',
      table: 'evaluations',
      columns: ['generation_prompt', 'notes'],
      labels: ['prompt', 'notes'],
      joins: 'CROSS JOIN evaluations o ON o.seq = f.id',
      direct: true,
      alias: 'o',
      columnWeights: [1, 0.8],
      weight: 1,
      share: 1,
    },
    {
      kind: 'evaluations',
      table: 'evaluation_judges',
      columns: ['name', 'reasoning'],
      labels: ['judge', 'judge reasoning'],
      joins:
        'CROSS JOIN evaluation_judges j ON j.seq = f.id CROSS JOIN evaluations o ON o.id = j.evaluation_id',
      direct: false,
      alias: 'j',
      columnWeights: [0.5, 1],
      weight: 0.8,
      share: 0.5,
    },
    {
      kind: 'evaluations',
      table: 'evaluation_issues',
      columns: ['code', 'description'],
      labels: ['issue', 'issue'],
      joins:
        'CROSS JOIN evaluation_issues i ON i.seq = f.id CROSS JOIN evaluations o ON o.id = i.evaluation_id',
      direct: false,
      alias: 'i',
      columnWeights: [0.5, 1],
      weight: 0.8,
      share: 0.5,
    },
  ],
  assets: [
    {
      kind: 'assets',
      table: 'assets',
      columns: ['name'],
      labels: ['name'],
      joins: 'CROSS JOIN assets o ON o.seq = f.id',
      direct: true,
      alias: 'o',
      columnWeights: [1],
      weight: 1,
      share: 1,
    },
  ],
}

export const LINK_SOURCES: Record<SearchKind, readonly LinkSource[]> = {
  // A model's name finds its runs: "upscale" lists the runs of atelier/upscale.
  runs: [
    {
      kind: 'runs',
      table: 'models',
      columns: ['name', 'slug', 'description'],
      labels: ['model', 'model', 'model'],
      recordColumn: 'model_slug',
      key: 'slug',
      columnWeights: [1, 1, 0.3],
      weight: 0.5,
      follow: 5,
    },
  ],
  evaluations: [],
  // A folder's path finds the assets in it; a path holds its parents' names, so subfolders too.
  assets: [
    {
      kind: 'assets',
      table: 'asset_folders',
      columns: ['path'],
      labels: ['folder'],
      recordColumn: 'folder_id',
      key: 'id',
      columnWeights: [1],
      weight: 0.7,
      follow: 10,
    },
  ],
}

/** Order of kinds among records created in the same millisecond, so lists never tie. */
export const KIND_RANK: Record<SearchKind, number> = { runs: 2, evaluations: 1, assets: 0 }
