import type Database from 'better-sqlite3'
import type { Run, RunStatusCode } from '../../../src-shared/api'
import { decimalMicro, idList, timeMs, timeMsOrNull } from '../values'
import { RowWriter } from './rows'
import { newestFirstPage, StatementCache, type NewestFirstQuery, type Page } from './statements'

export interface RunListQuery extends NewestFirstQuery {
  status?: RunStatusCode
  /** `provider/model`. */
  model?: string
}

/** Input keys that hold the prompt, most specific first; flows name their inputs freely. */
const PROMPT_KEYS = ['prompt', 'positive_prompt', 'text', 'caption'] as const

/** Strings that are references rather than words: searching them finds nothing useful. */
const NOT_WORDS = /^(?:https?:\/\/|data:)/

/**
 * The text of a run's input for search: the prompt on its own (lists show it), and every
 * other word-like string value, one level deep (negative prompts, styles, flow inputs…).
 */
export function runInputText(input: Run['input']): { prompt: string | null; other: string | null } {
  const promptKey = PROMPT_KEYS.find((key) => typeof input[key] === 'string')
  const other: string[] = []
  for (const key in input) {
    if (key === promptKey) continue
    const value = input[key]
    if (typeof value === 'string') {
      if (!NOT_WORDS.test(value)) other.push(value)
    } else if (Array.isArray(value)) {
      for (const item of value)
        if (typeof item === 'string' && !NOT_WORDS.test(item)) other.push(item)
    }
  }
  return {
    prompt: promptKey === undefined ? null : (input[promptKey] as string),
    other: other.length > 0 ? other.join('\n') : null,
  }
}

/** The columns written after `id`, in the order `runRow` gives them. */
const RUN_COLUMNS = [
  'org_id',
  'status_code',
  'target_type_code',
  'source_code',
  'model_slug',
  'flow_id',
  'wfengine_workflow_id',
  'batch_id',
  'parent_run_id',
  'idempotency_key',
  'cost',
  'cost_micro',
  'created_ms',
  'updated_ms',
  'completed_ms',
  'prompt',
  'input_text',
  'json',
] as const

/**
 * Runs, keyed by the service id. A page is written in one transaction; a record older than the
 * stored one (by updated_at) never replaces it, so a list page read before a fresher single GET
 * cannot undo it. Node runs, logs and callback deliveries hang off a run and go with it.
 */
export class RunsRepository {
  private readonly rows: RowWriter
  private readonly byId: Database.Statement
  private readonly byIds: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly countByOrg: Database.Statement
  private readonly lists: StatementCache
  private readonly writePage: Database.Transaction<(records: readonly Run[]) => number>

  constructor(db: Database.Database) {
    this.rows = new RowWriter(db, {
      table: 'runs',
      key: ['id'],
      columns: RUN_COLUMNS,
      fts: ['prompt', 'input_text'],
    })
    this.byId = db.prepare('SELECT json FROM runs WHERE id = ?').pluck()
    this.byIds = db
      .prepare('SELECT json FROM runs WHERE id IN (SELECT value FROM json_each(?))')
      .pluck()
    this.deleteByIds = db.prepare('DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))')
    this.countByOrg = db.prepare('SELECT count(*) FROM runs WHERE org_id = ?').pluck()
    this.lists = new StatementCache(db)
    this.writePage = db.transaction((records: readonly Run[]) => {
      let written = 0
      for (const run of records) if (this.rows.write(runRow(run)) !== 'stale') written++
      return written
    })
  }

  /** Writes a page in one transaction; returns how many rows were inserted or updated. */
  upsertPage(records: readonly Run[]): number {
    return this.writePage.immediate(records)
  }

  get(id: string): Run | null {
    const json = this.byId.get(id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as Run)
  }

  getMany(ids: readonly string[]): Run[] {
    return (this.byIds.all(idList(ids)) as string[]).map((json) => JSON.parse(json) as Run)
  }

  /** Deletes runs (tombstones); their node runs, logs and deliveries go by cascade. */
  remove(ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(idList(ids)).changes
  }

  count(orgId: string): number {
    return this.countByOrg.get(orgId) as number
  }

  /**
   * How long the latest succeeded runs of a model (`provider/model`) or workflow-engine workflow
   * (its id) took at the service, created to completed, in ms, oldest first.
   */
  recentDurations(orgId: string, target: string, limit = 16): number[] {
    const column = target.includes('/') ? 'model_slug' : 'wfengine_workflow_id'
    const durations = this.lists
      .get(
        `SELECT completed_ms - created_ms FROM runs
         WHERE org_id = ? AND ${column} = ? AND status_code = 'succeeded' AND completed_ms IS NOT NULL
         ORDER BY created_ms DESC LIMIT ?`,
      )
      .pluck()
      .all(orgId, target, limit) as number[]
    return durations.reverse()
  }

  /** Newest first, keyset-paged on (created, seq) so deep pages cost what the first one does. */
  list(query: RunListQuery): Page<Run> {
    return newestFirstPage<Run>(this.lists, 'runs', query, (where) => {
      if (query.status !== undefined) where.add('status_code = ?', query.status)
      if (query.model !== undefined) where.add('model_slug = ?', query.model)
    })
  }
}

function runRow(run: Run): unknown[] {
  const text = runInputText(run.input)
  return [
    run.id,
    run.org_id,
    run.status_code,
    run.target_type_code,
    run.source_code,
    run.model_slug,
    run.flow_id,
    run.wfengine_workflow_id,
    run.batch_id,
    run.parent_run_id,
    run.idempotency_key,
    run.cost,
    decimalMicro(run.cost),
    timeMs(run.created_at, 'run.created_at'),
    timeMs(run.updated_at, 'run.updated_at'),
    timeMsOrNull(run.completed_at, 'run.completed_at'),
    text.prompt,
    text.other,
    JSON.stringify(run),
  ]
}
