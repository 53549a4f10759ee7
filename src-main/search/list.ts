import type { SearchKind, SearchQuery } from '../../src-shared/domain/search'
import { filtersOf, TABLE, type Scope } from './filters'
import { KIND_RANK } from './sources'
import type { Statements } from './statements'

/**
 * A search without words: the records that pass the filters, newest first, keyset-paged on
 * (created, kind, seq) so a deep page costs what the first one does and paging never skips or
 * repeats a record. Each kind reads its next rows through the index of its filters; the kinds
 * are merged here.
 */

export interface ListPosition {
  createdMs: number
  kindRank: number
  seq: number
}

export interface Listed {
  kind: SearchKind
  seq: number
  createdMs: number
  json: string
}

export function list(
  statements: Statements,
  query: SearchQuery,
  scope: Scope,
  after: ListPosition | null,
): { rows: Listed[]; more: boolean } {
  const rows: Listed[] = []
  for (const kind of query.kinds) {
    const { where } = filtersOf(kind, 'o', query, scope)
    if (after !== null) {
      // Past the position in (created, kind, seq) order, as each kind's own index sees it.
      const rank = KIND_RANK[kind]
      if (rank < after.kindRank) where.add('o.created_ms <= ?', after.createdMs)
      else if (rank > after.kindRank) where.add('o.created_ms < ?', after.createdMs)
      else where.add('(o.created_ms, o.seq) < (?, ?)', after.createdMs, after.seq)
    }
    const found = statements.rows(
      `SELECT o.seq, o.created_ms, o.json FROM ${TABLE[kind]} o WHERE ${where.sql}
       ORDER BY o.created_ms DESC, o.seq DESC LIMIT ?`,
      ...where.values,
      query.limit + 1,
    ) as [number, number, string][]
    for (const [seq, createdMs, json] of found) rows.push({ kind, seq, createdMs, json })
  }
  rows.sort(
    (a, b) => b.createdMs - a.createdMs || KIND_RANK[b.kind] - KIND_RANK[a.kind] || b.seq - a.seq,
  )
  return { rows: rows.slice(0, query.limit), more: rows.length > query.limit }
}
