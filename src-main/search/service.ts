import type { Mirror } from '../db'
import type { SearchQuery, SearchResult, SearchResultItem } from '../../src-shared/domain/search'
import { decodeCursor, encodeCursor } from './cursor'
import { SearchError } from './errors'
import type { FolderFilter, Scope } from './filters'
import { list } from './list'
import { matchOf, present, recordJson } from './present'
import { checkedSearch, parseSearch, type ParsedSearch } from './query'
import { rank } from './ranked'
import { KIND_RANK } from './sources'
import { Statements } from './statements'
import { phrasesOf } from './text'

export interface SearchScope {
  /** The organization whose records are searched (see `syncedOrganizations`). */
  orgId: string
}

export interface MirrorSearchOptions {
  /** For the recency boost of ranked results. */
  now?: () => number
}

export class MirrorSearch {
  private readonly statements: Statements
  private readonly now: () => number
  // One read transaction per page: every statement sees the mirror as it was at its start,
  // even while a sync writes.
  private readonly read: (scope: SearchScope, parsed: ParsedSearch) => SearchResult

  constructor(mirror: Mirror, options: MirrorSearchOptions = {}) {
    this.statements = new Statements(mirror.db)
    this.now = options.now ?? Date.now
    this.read = mirror.db.transaction((scope: SearchScope, parsed: ParsedSearch) =>
      this.page(scope, parsed),
    )
  }

  /**
   * One page of a search. `input` is checked here (see `searchQuerySchema`), so callers pass
   * what they received; bad input throws a SearchError with a stable code.
   */
  search(scope: SearchScope, input: unknown): SearchResult {
    return this.read(scope, parseSearch(input))
  }

  /** The same, for a query the caller already checked against `searchQuerySchema`. */
  searchChecked(scope: SearchScope, query: SearchQuery): SearchResult {
    return this.read(scope, checkedSearch(query))
  }

  private page(scope: SearchScope, { query, match }: ParsedSearch): SearchResult {
    const state = query.cursor === null ? null : decodeCursor(query, query.cursor)
    const where: Scope = { orgId: scope.orgId }
    if (query.folder !== undefined) where.folder = this.folder(scope.orgId, query.folder)
    if (match === null) {
      if (state?.mode === 'ranked') throw wrongCursor()
      const found = list(this.statements, query, where, state)
      const last = found.rows.at(-1)
      return {
        mode: 'list',
        items: found.rows.map((row) =>
          present(this.statements, row.kind, row.json, row.createdMs, null),
        ),
        next:
          found.more && last
            ? encodeCursor(query, {
                mode: 'list',
                createdMs: last.createdMs,
                kindRank: KIND_RANK[last.kind],
                seq: last.seq,
              })
            : null,
        bounded: false,
      }
    }
    if (state?.mode === 'list') throw wrongCursor()
    const nowMs = state?.nowMs ?? this.now()
    const offset = state?.offset ?? 0
    const ranking = rank(this.statements, query, match, where, nowMs)
    const page = ranking.candidates.slice(offset, offset + query.limit)
    const phrases = phrasesOf(query.text, match.prefix !== null)
    const items = page.flatMap((candidate): SearchResultItem[] => {
      const json = recordJson(this.statements, candidate.kind, candidate.seq)
      if (json === null) return []
      const matched = matchOf(
        this.statements,
        candidate.source,
        candidate.rowid,
        phrases,
        candidate.score,
      )
      return [present(this.statements, candidate.kind, json, candidate.createdMs, matched)]
    })
    const end = offset + page.length
    return {
      mode: 'ranked',
      items,
      next:
        end < ranking.candidates.length
          ? encodeCursor(query, { mode: 'ranked', offset: end, nowMs })
          : null,
      bounded: ranking.bounded,
    }
  }

  /** A folder given by path (`/` is the root) or by id. */
  private folder(orgId: string, folder: string): FolderFilter {
    if (!folder.startsWith('/')) return { id: folder }
    const path = folder.replace(/\/+$/, '')
    if (path === '') return 'root'
    const id = this.statements.value(
      'SELECT id FROM asset_folders WHERE org_id = ? AND path = ? ORDER BY seq LIMIT 1',
      orgId,
      path,
    ) as string | undefined
    if (id === undefined) {
      throw new SearchError(
        'SEARCH_INVALID_QUERY',
        `There is no folder ${path} in the mirror. Check the path (it starts at the root, e.g. /Clients/Nordlys), or sync to bring new folders in.`,
      )
    }
    return { id }
  }
}

function wrongCursor(): SearchError {
  return new SearchError(
    'SEARCH_INVALID_CURSOR',
    'The cursor belongs to another search; pass the `next` of the previous page of the same search, or leave it out to start from the first page.',
  )
}
