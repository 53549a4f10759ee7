import type { SearchKind, SearchQuery } from '../../src-shared/domain/search'
import { filtersOf, TABLE, type Scope, type Where } from './filters'
import type { Match } from './query'
import {
  CANDIDATES,
  INDEX_SOURCES,
  KIND_RANK,
  LINK_SOURCES,
  type IndexSource,
  type TextSource,
} from './sources'
import { bm25, documentFrequency, idf } from './score'
import type { Statements } from './statements'
import { phrasesOf, type Phrase } from './text'

/**
 * Ranking on a bounded set of candidates.
 *
 * FTS5 can walk a word's list newest row first and stop (`ORDER BY rowid DESC LIMIT n`);
 * ranking every match instead (`ORDER BY bm25`) scores every match, hundreds of milliseconds for
 * a common word on a large mirror. So each index gives at most its newest matches (its share of
 * CANDIDATES), and those are ranked here, by BM25 computed from their text (`score.ts` says why
 * not FTS5's bm25()), weighted by where they matched, plus a small boost for recent records.
 * When the words match more records than that, an older one can be missing even if it would
 * rank first. `bounded` says so; more words or a filter bring older records into reach. Rowids
 * follow the order records first reached the mirror, which is close to the order they were
 * created in.
 *
 * The last word as a prefix: FTS5 answers a prefix by merging the whole lists of every word
 * that starts with it, with no early stop, so on a large mirror a prefix of a common word costs
 * tens of milliseconds. So the words are first matched whole, which stops early, and the prefix
 * is tried only when that finds less than a page in an index: the last word is not a whole word
 * yet (search as you type), or a rare one. A whole word that matches a page or more is taken
 * as meant ("sunset" then does not also find "sunsets").
 *
 * Filters are checked in the same statement, on the record's row. When they narrow the
 * records down a lot, few of the newest matches pass, and reading a row for each match that
 * fails is what costs. So the records that pass the filters the kind's list indexes answer
 * (see `filtersOf`) are read first from those indexes, newest first, at most PROBE per index,
 * and intersected; the record's own matches are then checked against that set in memory,
 * scanning at most SET_WINDOW matches within the set's rowid range. When an index holds more
 * than PROBE such records, the older ones are out of reach (`bounded`); when none, the kind is
 * skipped. Filters no index answers are checked on the rows of the matches; with no indexed
 * filter at all, at most WINDOW matches are scanned, the newest first. Matches in log lines,
 * judges and issues cost two rows each, so fewer of them are scanned under filters.
 */

/** Records found through what they point to (a model's runs): they rank below their own text. */
const LINK_CANDIDATES = 250
/** Index entries read to estimate how many rows hold a word. */
const DF_SAMPLE = 1_000
const PROBE = 5_000
const SET_WINDOW = 10_000
/** Matches whose rows are read to check filters: a log line or a judge costs two rows. */
const WINDOW = { direct: 5_000, detail: 300 }
/** A match made today counts this much more than one made long ago. */
const RECENCY_BOOST = 0.25
const RECENCY_HALF_LIFE_DAYS = 30
const DAY_MS = 24 * 60 * 60 * 1000

export interface Candidate {
  kind: SearchKind
  seq: number
  createdMs: number
  score: number
  /** The text that matched: the index and its row. */
  source: TextSource
  rowid: number
}

export interface Ranking {
  candidates: Candidate[]
  bounded: boolean
}

type Plan =
  | { type: 'all' }
  /** `complete`: every record passing the indexed filters is in `seqs`, not only the newest. */
  | { type: 'set'; seqs: number[]; complete: boolean }
  | { type: 'window' }
  | { type: 'none' }

export function rank(
  statements: Statements,
  query: SearchQuery,
  match: Match,
  scope: Scope,
  nowMs: number,
): Ranking {
  const best = new Map<number, Candidate & { priority: number }>()
  let bounded = false
  /**
   * A record found in several places ranks by its best match, and shows its own text when that
   * matched (the prompt says more than the log line that repeats it); `priority` is the order
   * of the places, the record's own index first.
   */
  const offer = (candidate: Omit<Candidate, 'score'>, relevance: number, priority: number) => {
    const ageDays = Math.max(0, nowMs - candidate.createdMs) / DAY_MS
    const score = relevance * (1 + RECENCY_BOOST * Math.pow(0.5, ageDays / RECENCY_HALF_LIFE_DAYS))
    const key = KIND_RANK[candidate.kind] * 2 ** 44 + candidate.seq
    const held = best.get(key)
    if (!held) {
      best.set(key, { ...candidate, score, priority })
    } else if (priority < held.priority || (priority === held.priority && score > held.score)) {
      best.set(key, { ...candidate, score: Math.max(score, held.score), priority })
    } else {
      held.score = Math.max(score, held.score)
    }
  }

  const shares = query.kinds
    .flatMap((kind) => INDEX_SOURCES[kind])
    .reduce((sum, source) => sum + source.share, 0)
  for (const kind of query.kinds) {
    const filters = filtersOf(kind, 'o', query, scope)
    const plan: Plan = !filters.filtered
      ? { type: 'all' }
      : filters.indexed.length === 0
        ? { type: 'window' }
        : probe(statements, kind, filters.indexed)
    if (plan.type === 'none') continue
    for (const [priority, source] of INDEX_SOURCES[kind].entries()) {
      const limit = Math.round((CANDIDATES * source.share) / shares)
      let prefixed = false
      let found = fromIndex(statements, source, limit, plan, filters.where, match.exact)
      if (match.prefix !== null && found.rows.length < query.limit && !found.bounded) {
        found = fromIndex(statements, source, limit, plan, filters.where, match.prefix)
        prefixed = true
      }
      bounded ||= found.bounded
      if (found.rows.length === 0) continue
      const phrases = phrasesOf(query.text, prefixed)
      const newest =
        (statements.value(`SELECT max(seq) FROM ${source.table}`) as number | null) ?? 0
      const idfs = phrases.map((phrase) => {
        const sample = statements.rows(
          `SELECT rowid FROM ${source.table}_fts WHERE ${source.table}_fts MATCH ?
           ORDER BY rowid DESC LIMIT ?`,
          phraseQuery(phrase),
          DF_SAMPLE,
        )
        const oldest = (sample.at(-1)?.[0] as number | undefined) ?? newest
        return idf(newest, documentFrequency(sample.length, DF_SAMPLE, oldest, newest))
      })
      const relevance = bm25(
        found.rows.map((row) => row.slice(3) as (string | null)[]),
        phrases,
        idfs,
        source.columnWeights,
      )
      found.rows.forEach(([rowid, seq, createdMs], r) => {
        offer(
          { kind, seq, createdMs, source, rowid },
          (relevance[r] ?? 0) * source.weight,
          priority,
        )
      })
    }
    for (const [index, link] of LINK_SOURCES[kind].entries()) {
      // Small tables (models, folders): the prefix costs little, and every match is ranked.
      const fts = `${link.table}_fts`
      const matched = statements.rows(
        `SELECT f.rowid, bm25(${fts}, ${link.columnWeights.join(', ')}), t.${link.key}
         FROM ${fts} f CROSS JOIN ${link.table} t ON t.seq = f.rowid
         WHERE ${fts} MATCH ? AND t.org_id = ? ORDER BY 2 LIMIT ?`,
        match.prefix ?? match.exact,
        scope.orgId,
        link.follow,
      ) as [number, number, string][]
      const each = Math.ceil(LINK_CANDIDATES / Math.max(1, matched.length))
      for (const [rowid, rank, key] of matched) {
        const records = statements.rows(
          `SELECT o.seq, o.created_ms FROM ${TABLE[kind]} o
           WHERE ${filters.where.sql} AND o.${link.recordColumn} = ?
           ORDER BY o.created_ms DESC, o.seq DESC LIMIT ?`,
          ...filters.where.values,
          key,
          each,
        ) as [number, number][]
        bounded ||= records.length === each
        for (const [seq, createdMs] of records) {
          offer(
            { kind, seq, createdMs, source: link, rowid },
            -rank * link.weight,
            INDEX_SOURCES[kind].length + index,
          )
        }
      }
    }
  }
  const candidates: Candidate[] = [...best.values()].sort(
    (a, b) =>
      b.score - a.score ||
      b.createdMs - a.createdMs ||
      KIND_RANK[b.kind] - KIND_RANK[a.kind] ||
      b.seq - a.seq,
  )
  return { candidates, bounded }
}

/**
 * The records that pass every indexed condition, newest first, each condition read from its
 * own index (index entries only, no rows) and the lists intersected. A list cut at PROBE
 * entries is exact only for records created after its last one, so the set keeps those.
 */
function probe(statements: Statements, kind: SearchKind, indexed: readonly Where[]): Plan {
  const lists = indexed.map(
    (condition) =>
      statements.rows(
        `SELECT o.seq, o.created_ms FROM ${TABLE[kind]} o WHERE ${condition.sql}
         ORDER BY o.created_ms DESC, o.seq DESC LIMIT ?`,
        ...condition.values,
        PROBE + 1,
      ) as [number, number][],
  )
  if (lists.some((list) => list.length === 0)) return { type: 'none' }
  let after = Number.NEGATIVE_INFINITY
  for (const list of lists) {
    if (list.length > PROBE) after = Math.max(after, list[PROBE - 1]?.[1] ?? after)
  }
  const complete = after === Number.NEGATIVE_INFINITY
  let seqs = (lists[0] ?? [])
    .filter(([, created]) => complete || created > after)
    .map(([seq]) => seq)
  for (const list of lists.slice(1)) {
    const passing = new Set(list.map(([seq]) => seq))
    seqs = seqs.filter((seq) => passing.has(seq))
  }
  return { type: 'set', seqs: seqs.sort((a, b) => a - b), complete }
}

/** An FTS5 query of one word, as `ftsQuery` writes it: its folded tokens quoted. */
function phraseQuery(phrase: Phrase): string {
  return `"${phrase.tokens.join(' ')}"${phrase.prefix ? '*' : ''}`
}

type Row = [rowid: number, seq: number, createdMs: number, ...texts: (string | null)[]]

/**
 * The newest matches of one index that pass the plan, with what ranking needs. The index is
 * walked newest first from `top`, at most `scan` entries, in a subquery: FTS5 stops early that
 * way, but not when given a lower rowid bound, which makes it seek through the word's whole
 * list (as slow as reading it).
 */
function fromIndex(
  statements: Statements,
  source: IndexSource,
  limit: number,
  plan: Exclude<Plan, { type: 'none' }>,
  where: Where,
  match: string,
): { rows: Row[]; bounded: boolean } {
  const fts = `${source.table}_fts`
  const texts = source.columns.map((column) => `${source.alias}.${column}`).join(', ')
  const set = plan.type === 'set' && source.direct ? plan : null
  if (set?.seqs.length === 0) return { rows: [], bounded: !set.complete }
  const top = set ? (set.seqs.at(-1) ?? 0) : Number.MAX_SAFE_INTEGER
  const scan =
    plan.type === 'all' ? limit : set ? SET_WINDOW : source.direct ? WINDOW.direct : WINDOW.detail
  const rows = statements.rows(
    `SELECT f.id, o.seq, o.created_ms, ${texts}
     FROM (SELECT rowid AS id FROM ${fts} WHERE ${fts} MATCH ? AND rowid <= ?
           ORDER BY rowid DESC LIMIT ?) f ${source.joins}
     WHERE ${set ? 'f.id IN (SELECT value FROM json_each(?)) AND ' : ''}${where.sql}
     ORDER BY f.id DESC LIMIT ?`,
    match,
    top,
    scan,
    ...(set ? [JSON.stringify(set.seqs)] : []),
    ...where.values,
    limit,
  ) as Row[]
  if (rows.length === limit) return { rows, bounded: true }
  // Matches past the scan: older ones were not looked at (for a set, only if the set reaches them).
  const next = statements.value(
    `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`,
    match,
    top,
    scan,
  ) as number | undefined
  const beyond = next !== undefined && (set === null || next >= (set.seqs[0] ?? 0))
  return { rows, bounded: beyond || (set !== null && !set.complete) }
}
