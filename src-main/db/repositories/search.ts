import type Database from 'better-sqlite3'

/**
 * The offline search index, read side. Each searchable table has its own external-content FTS5
 * index (see the mirror's migration 2), so what is matched is exactly what the table holds;
 * this runs one query per kind and merges them by bm25. It is the primitive: it ranks every
 * match, which is exact but grows with the mirror. The search screen and `atelier search` use
 * src-main/search, which ranks a bounded set of the newest matches, with filters and paging.
 */

export type SearchKind =
  | 'run'
  | 'run_log'
  | 'evaluation'
  | 'evaluation_judge'
  | 'evaluation_issue'
  | 'asset'
  | 'asset_folder'
  | 'model'
  | 'model_input'
  | 'flow'

export interface SearchHit {
  kind: SearchKind
  /** The matched row's service id; null for a judge or an issue the service sent without one. */
  id: string | null
  /** What to open to see it: the run of a log line, the evaluation of a judge, the model of an input. */
  ownerId: string
  /** The best-matching column, with matches between SNIPPET_OPEN and SNIPPET_CLOSE. */
  snippet: string
  /** bm25: lower is better. */
  score: number
}

export interface SearchQuery {
  orgId: string
  /** Words as a user types them; every word must match, the last one as a prefix. */
  text: string
  kinds?: readonly SearchKind[]
  limit?: number
}

/** Control characters, so that no text a record can hold is mistaken for a highlight. */
export const SNIPPET_OPEN = '\u0002'
export const SNIPPET_CLOSE = '\u0003'

interface Source {
  table: string
  /** Joined to reach the organization when the table has none of its own. */
  join?: string
  id: string
  owner: string
  org: string
}

const own = (table: string, owner = 't.id'): Source => ({
  table,
  id: 't.id',
  owner,
  org: 't.org_id',
})

const ofEvaluation = (table: string): Source => ({
  table,
  join: 'JOIN evaluations e ON e.id = t.evaluation_id',
  id: 't.id',
  owner: 't.evaluation_id',
  org: 'e.org_id',
})

const SOURCES: Record<SearchKind, Source> = {
  run: own('runs'),
  run_log: own('run_logs', 't.run_id'),
  evaluation: own('evaluations'),
  evaluation_judge: ofEvaluation('evaluation_judges'),
  evaluation_issue: ofEvaluation('evaluation_issues'),
  asset: own('assets'),
  asset_folder: own('asset_folders'),
  model: own('models'),
  model_input: own('model_inputs', 't.model_id'),
  flow: own('flows'),
}

export const SEARCH_KINDS = Object.keys(SOURCES) as SearchKind[]

/** The words of user text that can match anything: those with a letter or a digit. */
function searchWords(text: string): string[] {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word))
}

/**
 * User text as an FTS5 query: each word quoted, so punctuation and words like OR or NEAR are
 * searched for rather than parsed; the last word is a prefix, for search as you type.
 *
 * `minPrefix`: the last word is a prefix only when it has at least this many letters or
 * digits. FTS5 answers a prefix by merging the lists of every term that starts with it, so a
 * one- or two-letter prefix reads a large part of the index; a short last word is then matched
 * whole instead.
 */
export function ftsQuery(text: string, options: { minPrefix?: number } = {}): string | null {
  const words = searchWords(text)
  const last = words.at(-1)
  if (last === undefined) return null
  const prefix = (last.match(/[\p{L}\p{N}]/gu)?.length ?? 0) >= (options.minPrefix ?? 1)
  return words
    .map((w, i) => `"${w.replaceAll('"', '""')}"${prefix && i === words.length - 1 ? '*' : ''}`)
    .join(' ')
}

export class SearchIndex {
  private readonly statements: Record<SearchKind, Database.Statement>

  constructor(db: Database.Database) {
    const statement = (kind: SearchKind) => {
      const source = SOURCES[kind]
      const fts = `${source.table}_fts`
      return db
        .prepare(
          `SELECT ${source.id}, ${source.owner}, snippet(${fts}, -1, ?, ?, '…', 12), bm25(${fts})
           FROM ${fts} JOIN ${source.table} t ON t.seq = ${fts}.rowid ${source.join ?? ''}
           WHERE ${fts} MATCH ? AND ${source.org} = ?
           ORDER BY bm25(${fts}) LIMIT ?`,
        )
        .raw()
    }
    this.statements = Object.fromEntries(SEARCH_KINDS.map((k) => [k, statement(k)])) as Record<
      SearchKind,
      Database.Statement
    >
  }

  find(query: SearchQuery): SearchHit[] {
    const match = ftsQuery(query.text)
    if (match === null) return []
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 500)
    const hits: SearchHit[] = []
    for (const kind of query.kinds ?? SEARCH_KINDS) {
      const rows = this.statements[kind].all(
        SNIPPET_OPEN,
        SNIPPET_CLOSE,
        match,
        query.orgId,
        limit,
      ) as [string | null, string, string, number][]
      for (const [id, ownerId, snippet, score] of rows)
        hits.push({ kind, id, ownerId, snippet, score })
    }
    return hits.sort((a, b) => a.score - b.score).slice(0, limit)
  }
}
