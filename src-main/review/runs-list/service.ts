import type Database from 'better-sqlite3'
import { Conditions, decimalMicro, ftsQuery, type Mirror } from '../../db'
import type { RunStatusCode, RunTargetTypeCode } from '../../../src-shared/api'
import {
  RUN_LIST_COUNT_CAP,
  runListQuerySchema,
  type RunFilterOptions,
  type RunListPage,
  type RunListQuery,
  type RunListRow,
} from '../../../src-shared/domain/runs-list'
import { decodeCursor, encodeCursor, type Position } from './cursor'
import { RunListError } from './errors'

export interface RunsListScope {
  /** The organization whose runs are listed: the core's. */
  orgId: string
}

/** A pasted run id finds that run, whatever its words. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** How much of the prompt a row carries: a line's worth, the rest is on the run's page. */
const TEXT_CHARS = 240

type Row = [
  seq: number,
  id: string,
  status: RunStatusCode,
  target: RunTargetTypeCode,
  model: string | null,
  flowId: string | null,
  workflowId: string | null,
  createdMs: number,
  completedMs: number | null,
  durationMs: number | null,
  cost: string | null,
  text: string | null,
  hasOutputs: number,
  failure: string | null,
  name: string | null,
]

/**
 * The row's columns, the names of what ran from the organization's view of the catalog. Only
 * the page's rows pay for the lookups and the json reads (one statement, a page at a time).
 */
const COLUMNS = `r.seq, r.id, r.status_code, r.target_type_code, r.model_slug, r.flow_id,
  r.wfengine_workflow_id, r.created_ms, r.completed_ms, r.json ->> '$.duration_ms', r.cost,
  substr(coalesce(r.prompt, r.input_text), 1, ${String(TEXT_CHARS)}),
  coalesce(r.json ->> '$.output' NOT IN ('{}', '[]'), 0),
  CASE WHEN r.status_code = 'failed'
    THEN coalesce(r.json ->> '$.failure_message', r.json ->> '$.failure_code') END,
  CASE r.target_type_code
    WHEN 'model' THEN (SELECT m.name FROM models m
      WHERE m.org_id = r.org_id AND m.slug = r.model_slug ORDER BY m.seq LIMIT 1)
    WHEN 'flow' THEN (SELECT f.name FROM flows f WHERE f.org_id = r.org_id AND f.id = r.flow_id)
    ELSE (SELECT w.name FROM workflows w
      WHERE w.org_id = r.org_id AND w.id = r.wfengine_workflow_id) END`

/**
 * The Runs section's list over the mirror: newest first, keyset-paged on (created, seq), with
 * filters and words. Each filter is one a list index answers in created order (status, model,
 * flow, dates), so a page reads about as many index entries as it shows, or is checked on the
 * rows walked (cost, several statuses at once). Words go through the runs' FTS index: the
 * matching rowids are read once per page and the walk in created order keeps those.
 */
export class RunsList {
  private readonly statements = new Map<string, Database.Statement>()
  private readonly read: (query: RunListQuery) => RunListPage

  constructor(
    private readonly mirror: Mirror,
    private readonly scope: RunsListScope,
  ) {
    // One read transaction per page: the page and its count see the same mirror while a sync writes.
    this.read = mirror.db.transaction((query: RunListQuery) => this.page(query))
  }

  /** One page; `input` is checked here, so bad input throws a RunListError with a stable code. */
  list(input: unknown): RunListPage {
    const parsed = runListQuerySchema.safeParse(input ?? {})
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const field = issue?.path.map(String).join('.') || 'the query'
      throw new RunListError('RUNS_INVALID_QUERY', `${field} ${issue?.message ?? 'is not valid'}.`)
    }
    return this.read(parsed.data)
  }

  /** The same, for a query already checked against `runListQuerySchema` (the IPC dispatch does). */
  listChecked(query: RunListQuery): RunListPage {
    return this.read(query)
  }

  /**
   * The models and flows the mirror's runs were made with, named from the catalog. Read from
   * the catalog's small tables, each name checked against the runs' own index.
   */
  filterOptions(): RunFilterOptions {
    const models = this.statement(
      `SELECT m.slug, min(m.name) FROM models m WHERE m.org_id = ? AND EXISTS
         (SELECT 1 FROM runs r WHERE r.org_id = m.org_id AND r.model_slug = m.slug)
       GROUP BY m.slug ORDER BY 2 COLLATE NOCASE, 1`,
    ).all(this.scope.orgId) as [string, string][]
    const flows = this.statement(
      `SELECT f.id, f.name FROM flows f WHERE f.org_id = ? AND EXISTS
         (SELECT 1 FROM runs r WHERE r.flow_id = f.id AND r.org_id = f.org_id)
       ORDER BY f.name COLLATE NOCASE, f.id`,
    ).all(this.scope.orgId) as [string, string][]
    return {
      models: models.map(([slug, name]) => ({ slug, name })),
      flows: flows.map(([id, name]) => ({ id, name })),
    }
  }

  private page(query: RunListQuery): RunListPage {
    const after = query.cursor ? decodeCursor(query, query.cursor) : null
    const where = this.where(query)
    if (where === null) return { items: [], next: null, total: { count: 0, more: false } }
    const paged = new Conditions().add(where.sql, ...where.values)
    if (after) paged.add('(r.created_ms, r.seq) < (?, ?)', after.createdMs, after.seq)
    const rows = this.statement(
      `SELECT ${COLUMNS} FROM runs r WHERE ${paged.sql}
       ORDER BY r.created_ms DESC, r.seq DESC LIMIT ?`,
    ).all(...paged.values, query.limit + 1) as Row[]
    const more = rows.length > query.limit
    const kept = more ? rows.slice(0, query.limit) : rows
    const last = kept.at(-1)
    const position: Position | null = last ? { createdMs: last[7], seq: last[0] } : null
    return {
      items: kept.map(toRow),
      next: more && position ? encodeCursor(query, position) : null,
      total: after ? null : this.count(where),
    }
  }

  /** Counted up to the cap, so a count costs at most that many index entries. */
  private count(where: Conditions): RunListPage['total'] {
    const [count] = this.statement(
      `SELECT count(*) FROM (SELECT 1 FROM runs r WHERE ${where.sql} LIMIT ?)`,
    ).get(...where.values, RUN_LIST_COUNT_CAP + 1) as [number]
    return { count: Math.min(count, RUN_LIST_COUNT_CAP), more: count > RUN_LIST_COUNT_CAP }
  }

  /** The filters as conditions on `r`; null when they can match nothing (words with no letter). */
  private where(query: RunListQuery): Conditions | null {
    const where = new Conditions().add('r.org_id = ?', this.scope.orgId)
    const statuses = [...new Set(query.statuses)]
    if (statuses.length === 1) where.add('r.status_code = ?', statuses[0])
    // Several: checked on the rows walked in created order. With the index, SQLite would merge
    // each status's entries and sort every match before the first row came out.
    else if (statuses.length > 1) {
      where.add(`+r.status_code IN (${statuses.map(() => '?').join(', ')})`, ...statuses)
    }
    if (query.model !== undefined) where.add('r.model_slug = ?', query.model)
    if (query.flowId !== undefined) where.add('r.flow_id = ?', query.flowId)
    if (query.fromMs !== undefined) where.add('r.created_ms >= ?', query.fromMs)
    if (query.toMs !== undefined) where.add('r.created_ms < ?', query.toMs)
    if (query.minCost !== undefined) where.add('r.cost_micro >= ?', credits(query.minCost))
    if (query.maxCost !== undefined) where.add('r.cost_micro <= ?', credits(query.maxCost))
    const text = query.text.trim()
    if (RUN_ID.test(text)) {
      where.add('r.id = ?', text.toLowerCase())
    } else if (text !== '') {
      // The last word as a prefix from 3 letters on: a shorter prefix reads most of the index.
      const match = ftsQuery(text, { minPrefix: 3 })
      if (match === null) return null
      where.add('r.seq IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)', match)
    }
    return where
  }

  /** Each combination of filters has its own text, prepared once (see `StatementCache`). */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.mirror.db.prepare(sql).raw()
      this.statements.set(sql, statement)
    }
    return statement
  }
}

function credits(value: string): number {
  const micro = decimalMicro(value)
  if (micro === null) {
    throw new RunListError(
      'RUNS_INVALID_QUERY',
      `"${value}" is not an amount of credits; write it as a number such as 0.05.`,
    )
  }
  return micro
}

function toRow(row: Row): RunListRow {
  const [
    ,
    id,
    status,
    target,
    model,
    flowId,
    workflowId,
    createdMs,
    completedMs,
    durationMs,
    cost,
    text,
    hasOutputs,
    failure,
    name,
  ] = row
  return {
    id,
    status,
    target,
    name: name ?? model ?? flowId ?? workflowId ?? 'Unknown target',
    model,
    flowId,
    createdMs,
    durationMs: durationMs ?? (completedMs === null ? null : Math.max(0, completedMs - createdMs)),
    cost,
    text: text === null ? null : text.replace(/\s+/g, ' ').trim() || null,
    hasOutputs: hasOutputs === 1,
    failure,
  }
}
