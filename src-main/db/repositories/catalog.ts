import type Database from 'better-sqlite3'
import type {
  Flow,
  Model,
  ModelInput,
  ModelOutput,
  ModelPricing,
  ReferenceRecord,
  Solution,
  Workflow,
} from '../../../src-shared/api'
import { decimalMicro, decodeCursor, idList, pageLimit, timeMs, timeMsOrNull } from '../values'
import { RowWriter, type WriteResult } from './rows'
import { toPage, type Page } from './statements'

/**
 * Records several organizations can read: service-wide models, public flows, workflows,
 * solutions, reference catalogs. Each organization's view is kept apart, keyed (org_id, id)
 * with org_id the organization synced, so a profile that switches organizations sees exactly
 * what the service showed that organization.
 */
export interface CatalogScope {
  orgId: string
}

export interface CatalogListQuery {
  limit?: number
  after?: string | null
}

type ModelChild = 'inputs' | 'outputs' | 'pricing'

interface SharedTable<T> {
  table: string
  /** Columns after org_id and id, in the order `values` gives them; json last. */
  columns: readonly string[]
  values: (record: T) => unknown[]
  /** The columns of `<table>_fts`, when the table is searched. */
  fts?: readonly string[]
  updatedMs: (record: T) => number
  deletedAt?: (record: T) => string | null
  order: { column: string; key: 'number' | 'string'; descending: boolean }
}

/** One shape for flows, workflows, solutions and models: upsert a page, read one, page through. */
export class SharedRecordsRepository<T extends { id: string }> {
  private readonly rows: RowWriter
  private readonly deleteOne: Database.Statement
  private readonly byId: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly deleteOthers: Database.Statement
  private readonly countByOrg: Database.Statement
  private readonly firstPage: Database.Statement
  private readonly nextPage: Database.Statement
  private readonly writePage: Database.Transaction<(records: readonly T[], orgId: string) => number>

  constructor(
    db: Database.Database,
    private readonly spec: SharedTable<T>,
  ) {
    const { table, columns, order } = spec
    this.rows = new RowWriter(db, {
      table,
      key: ['org_id', 'id'],
      columns,
      ...(spec.fts ? { fts: spec.fts } : {}),
    })
    this.deleteOne = db.prepare(
      `DELETE FROM ${table} WHERE org_id = ? AND id = ? AND updated_ms <= ?`,
    )
    this.byId = db.prepare(`SELECT json FROM ${table} WHERE org_id = ? AND id = ?`).pluck()
    this.deleteByIds = db.prepare(
      `DELETE FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`,
    )
    this.deleteOthers = db.prepare(
      `DELETE FROM ${table} WHERE org_id = ? AND id NOT IN (SELECT value FROM json_each(?))`,
    )
    this.countByOrg = db.prepare(`SELECT count(*) FROM ${table} WHERE org_id = ?`).pluck()
    const direction = order.descending ? 'DESC' : 'ASC'
    const select = `SELECT ${order.column}, seq, json FROM ${table} WHERE org_id = ?`
    const sort = `ORDER BY ${order.column} ${direction}, seq ${direction} LIMIT ?`
    const past = order.descending ? '<' : '>'
    this.firstPage = db.prepare(`${select} ${sort}`).raw()
    this.nextPage = db.prepare(`${select} AND (${order.column}, seq) ${past} (?, ?) ${sort}`).raw()
    this.writePage = db.transaction((records: readonly T[], orgId: string) => {
      let written = 0
      for (const record of records) if (this.writeOne(orgId, record) !== 'stale') written++
      return written
    })
  }

  /** One record, inside the caller's transaction. A record that comes back deleted is removed. */
  writeOne(orgId: string, record: T): WriteResult | 'removed' {
    if (this.spec.deletedAt?.(record)) {
      const removed = this.deleteOne.run(orgId, record.id, this.spec.updatedMs(record)).changes
      return removed > 0 ? 'removed' : 'stale'
    }
    return this.rows.write([orgId, record.id, ...this.spec.values(record)])
  }

  /** Writes a page in one transaction; returns how many records were written or removed. */
  upsertPage(records: readonly T[], scope: CatalogScope): number {
    return this.writePage.immediate(records, scope.orgId)
  }

  get(scope: CatalogScope, id: string): T | null {
    const json = this.byId.get(scope.orgId, id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as T)
  }

  /** Deleted on the service: gone from every organization's view. */
  remove(ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(idList(ids)).changes
  }

  /**
   * Removes from the organization's view every record but these: for a collection read whole
   * because its deletions have no tombstones (solutions), after its pages are written.
   */
  retainOnly(scope: CatalogScope, ids: readonly string[]): number {
    return this.deleteOthers.run(scope.orgId, idList(ids)).changes
  }

  count(scope: CatalogScope): number {
    return this.countByOrg.get(scope.orgId) as number
  }

  list(scope: CatalogScope, query: CatalogListQuery = {}): Page<T> {
    const limit = pageLimit(query.limit)
    const rows = query.after
      ? this.nextPage.all(scope.orgId, ...decodeCursor(query.after, this.spec.order.key), limit + 1)
      : this.firstPage.all(scope.orgId, limit + 1)
    return toPage<T>(rows as unknown[][], limit)
  }
}

export function flowsRepository(db: Database.Database): SharedRecordsRepository<Flow> {
  return new SharedRecordsRepository<Flow>(db, {
    table: 'flows',
    columns: [
      'owner_org_id',
      'slug',
      'name',
      'description',
      'status_code',
      'visibility_code',
      'version',
      'created_ms',
      'updated_ms',
      'json',
    ],
    values: (f) => [
      f.org_id,
      f.slug,
      f.name,
      f.description,
      f.status_code,
      f.visibility_code,
      f.version,
      timeMs(f.created_at, 'flow.created_at'),
      timeMs(f.updated_at, 'flow.updated_at'),
      JSON.stringify(f),
    ],
    fts: ['name', 'description'],
    updatedMs: (f) => timeMs(f.updated_at, 'flow.updated_at'),
    // The flows a user edits most recently are the ones they look for.
    order: { column: 'updated_ms', key: 'number', descending: true },
  })
}

export function workflowsRepository(db: Database.Database): SharedRecordsRepository<Workflow> {
  return new SharedRecordsRepository<Workflow>(db, {
    table: 'workflows',
    columns: ['owner_org_id', 'slug', 'name', 'status_code', 'created_ms', 'updated_ms', 'json'],
    values: (w) => [
      w.org_id,
      w.slug,
      w.name,
      w.status_code,
      timeMs(w.created_at, 'workflow.created_at'),
      timeMs(w.updated_at, 'workflow.updated_at'),
      JSON.stringify(w),
    ],
    updatedMs: (w) => timeMs(w.updated_at, 'workflow.updated_at'),
    deletedAt: (w) => w.deleted_at,
    order: { column: 'name', key: 'string', descending: false },
  })
}

export function solutionsRepository(db: Database.Database): SharedRecordsRepository<Solution> {
  return new SharedRecordsRepository<Solution>(db, {
    table: 'solutions',
    columns: ['slug', 'title', 'section_code', 'sort_order', 'is_active', 'updated_ms', 'json'],
    values: (s) => [
      s.slug,
      s.title,
      s.section_code,
      s.sort_order,
      s.is_active ? 1 : 0,
      timeMs(s.updated_at, 'solution.updated_at'),
      JSON.stringify(s),
    ],
    updatedMs: (s) => timeMs(s.updated_at, 'solution.updated_at'),
    order: { column: 'title', key: 'string', descending: false },
  })
}

/**
 * Models with their inputs, outputs and pricing. Those three live in their own tables (the
 * service lists them on their own too), so they are taken out of the model's json: one truth
 * each. A model record that embeds them (GET /v1/models/{id}) replaces the model's rows; a list
 * item, which leaves them out, leaves them as they are.
 */
export class ModelsRepository {
  private readonly models: SharedRecordsRepository<Model>
  private readonly bySlug: Database.Statement
  private readonly exists: Database.Statement
  private readonly children: Record<
    ModelChild,
    {
      rows: RowWriter
      any: Database.Statement
      remove: Database.Statement
      read: Database.Statement
    }
  >
  private readonly writePage: Database.Transaction<
    (records: readonly Model[], orgId: string) => number
  >
  private readonly replace: Database.Transaction<
    (kind: ModelChild, orgId: string, modelId: string, rows: readonly unknown[]) => void
  >

  constructor(db: Database.Database) {
    this.models = new SharedRecordsRepository<Model>(db, {
      table: 'models',
      columns: [
        'owner_org_id',
        'slug',
        'name',
        'description',
        'category_code',
        'status_code',
        'created_ms',
        'updated_ms',
        'json',
      ],
      values: (m) => {
        const { inputs: _i, outputs: _o, pricing: _p, ...model } = m
        return [
          m.org_id,
          m.slug,
          m.name,
          m.description,
          m.category_code,
          m.status_code,
          timeMs(m.created_at, 'model.created_at'),
          timeMs(m.updated_at, 'model.updated_at'),
          JSON.stringify(model),
        ]
      },
      fts: ['name', 'slug', 'description'],
      updatedMs: (m) => timeMs(m.updated_at, 'model.updated_at'),
      deletedAt: (m) => m.deleted_at,
      order: { column: 'name', key: 'string', descending: false },
    })
    this.bySlug = db
      .prepare('SELECT json FROM models WHERE org_id = ? AND slug = ? ORDER BY seq LIMIT 1')
      .pluck()
    this.exists = db.prepare('SELECT 1 FROM models WHERE org_id = ? AND id = ?').pluck()
    const child = (table: string, columns: readonly string[], fts?: readonly string[]) => ({
      // Replaced wholesale after the old rows are deleted, hence immutable: no conflict to settle.
      rows: new RowWriter(db, {
        table,
        key: ['org_id', 'id'],
        columns,
        immutable: true,
        ...(fts ? { fts } : {}),
      }),
      any: db.prepare(`SELECT 1 FROM ${table} WHERE org_id = ? AND model_id = ? LIMIT 1`).pluck(),
      remove: db.prepare(`DELETE FROM ${table} WHERE org_id = ? AND model_id = ?`),
      read: db
        .prepare(
          `SELECT json FROM ${table} WHERE org_id = ? AND model_id = ? ORDER BY sort_order, seq`,
        )
        .pluck(),
    })
    this.children = {
      inputs: child(
        'model_inputs',
        [
          'model_id',
          'name',
          'display_name',
          'description',
          'variable_type_code',
          'is_required',
          'sort_order',
          'updated_ms',
          'json',
        ],
        ['name', 'display_name', 'description'],
      ),
      outputs: child('model_outputs', [
        'model_id',
        'name',
        'variable_type_code',
        'sort_order',
        'updated_ms',
        'json',
      ]),
      pricing: child('model_pricing', [
        'model_id',
        'pricing_model_code',
        'model_input_id',
        'price',
        'price_micro',
        'currency_code',
        'unit_code',
        'sort_order',
        'disabled_ms',
        'updated_ms',
        'json',
      ]),
    }
    this.replace = db.transaction(
      (kind: ModelChild, orgId: string, modelId: string, rows: readonly unknown[]) => {
        if (this.exists.get(orgId, modelId) === undefined) {
          throw new Error(
            `Model ${modelId} is not in the mirror; write the model before its ${kind}.`,
          )
        }
        const statements = this.children[kind]
        // Deleting fires the search index's trigger; skip it when there is nothing to delete.
        if (statements.any.get(orgId, modelId) !== undefined) statements.remove.run(orgId, modelId)
        for (const row of rows) statements.rows.write([orgId, ...childRow(kind, row)])
      },
    )
    this.writePage = db.transaction((records: readonly Model[], orgId: string) => {
      let written = 0
      for (const m of records) {
        const result = this.models.writeOne(orgId, m)
        if (result === 'stale') continue
        written++
        if (result === 'removed') continue
        if (m.inputs) this.replace('inputs', orgId, m.id, m.inputs)
        if (m.outputs) this.replace('outputs', orgId, m.id, m.outputs)
        if (m.pricing) this.replace('pricing', orgId, m.id, m.pricing)
      }
      return written
    })
  }

  /**
   * Writes a page in one transaction. A record that embeds inputs, outputs or pricing replaces
   * the model's rows of each.
   */
  upsertPage(records: readonly Model[], scope: CatalogScope): number {
    return this.writePage.immediate(records, scope.orgId)
  }

  replaceInputs(scope: CatalogScope, modelId: string, inputs: readonly ModelInput[]): void {
    this.replace.immediate('inputs', scope.orgId, modelId, inputs)
  }

  replaceOutputs(scope: CatalogScope, modelId: string, outputs: readonly ModelOutput[]): void {
    this.replace.immediate('outputs', scope.orgId, modelId, outputs)
  }

  replacePricing(scope: CatalogScope, modelId: string, pricing: readonly ModelPricing[]): void {
    this.replace.immediate('pricing', scope.orgId, modelId, pricing)
  }

  get(scope: CatalogScope, id: string): Model | null {
    return this.models.get(scope, id)
  }

  withSlug(scope: CatalogScope, slug: string): Model | null {
    const json = this.bySlug.get(scope.orgId, slug) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as Model)
  }

  /** By name. */
  list(scope: CatalogScope, query: CatalogListQuery = {}): Page<Model> {
    return this.models.list(scope, query)
  }

  count(scope: CatalogScope): number {
    return this.models.count(scope)
  }

  remove(ids: readonly string[]): number {
    return this.models.remove(ids)
  }

  inputs(scope: CatalogScope, modelId: string): ModelInput[] {
    return this.read<ModelInput>('inputs', scope, modelId)
  }

  outputs(scope: CatalogScope, modelId: string): ModelOutput[] {
    return this.read<ModelOutput>('outputs', scope, modelId)
  }

  pricing(scope: CatalogScope, modelId: string): ModelPricing[] {
    return this.read<ModelPricing>('pricing', scope, modelId)
  }

  private read<T>(kind: ModelChild, scope: CatalogScope, modelId: string) {
    const rows = this.children[kind].read.all(scope.orgId, modelId) as string[]
    return rows.map((json) => JSON.parse(json) as T)
  }
}

function childRow(kind: ModelChild, row: unknown): unknown[] {
  if (kind === 'inputs') {
    const i = row as ModelInput
    return [
      i.id,
      i.model_id,
      i.name,
      i.display_name,
      i.description,
      i.variable_type_code,
      i.is_required ? 1 : 0,
      i.sort_order,
      timeMs(i.updated_at, 'model_input.updated_at'),
      JSON.stringify(i),
    ]
  }
  if (kind === 'outputs') {
    const o = row as ModelOutput
    return [
      o.id,
      o.model_id,
      o.name,
      o.variable_type_code,
      o.sort_order,
      timeMs(o.updated_at, 'model_output.updated_at'),
      JSON.stringify(o),
    ]
  }
  const p = row as ModelPricing
  return [
    p.id,
    p.model_id,
    p.pricing_model_code,
    p.model_input_id,
    p.price,
    decimalMicro(p.price),
    p.currency_code,
    p.unit_code,
    p.sort_order,
    timeMsOrNull(p.disabled_at, 'model_pricing.disabled_at'),
    timeMs(p.updated_at, 'model_pricing.updated_at'),
    JSON.stringify(p),
  ]
}

/**
 * Reference catalogs (`variable-types`, `runs/log-levels`, `evaluations/statuses`…). They are
 * small and have no tombstones, so each is replaced whole: a code the service dropped goes too.
 */
export class CatalogRecordsRepository {
  private readonly clear: Database.Statement
  private readonly insert: Database.Statement
  private readonly ofCatalog: Database.Statement
  private readonly one: Database.Statement
  private readonly writeAll: (
    orgId: string,
    catalog: string,
    records: readonly ReferenceRecord[],
  ) => number

  constructor(db: Database.Database) {
    this.clear = db.prepare('DELETE FROM catalog_records WHERE org_id = ? AND catalog = ?')
    this.insert = db.prepare(`
      INSERT INTO catalog_records (org_id, catalog, code, display_name, sort_order, is_active,
        updated_ms, json)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    this.ofCatalog = db
      .prepare(
        'SELECT json FROM catalog_records WHERE org_id = ? AND catalog = ? ORDER BY sort_order, code',
      )
      .pluck()
    this.one = db
      .prepare('SELECT json FROM catalog_records WHERE org_id = ? AND catalog = ? AND code = ?')
      .pluck()
    this.writeAll = db.transaction(
      (orgId: string, catalog: string, records: readonly ReferenceRecord[]) => {
        this.clear.run(orgId, catalog)
        for (const r of records) {
          this.insert.run(
            orgId,
            catalog,
            r.code,
            r.display_name,
            r.sort_order,
            r.is_active ? 1 : 0,
            timeMs(r.updated_at, 'catalog.updated_at'),
            JSON.stringify(r),
          )
        }
        return records.length
      },
    )
  }

  /** Replaces a whole catalog with the records the service gave (every page of it). */
  replace(scope: CatalogScope, catalog: string, records: readonly ReferenceRecord[]): number {
    return this.writeAll(scope.orgId, catalog, records)
  }

  /** By sort_order. Records keep every field they came with (a log level's color too). */
  list(scope: CatalogScope, catalog: string): ReferenceRecord[] {
    return (this.ofCatalog.all(scope.orgId, catalog) as string[]).map(
      (json) => JSON.parse(json) as ReferenceRecord,
    )
  }

  get(scope: CatalogScope, catalog: string, code: string): ReferenceRecord | null {
    const json = this.one.get(scope.orgId, catalog, code) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as ReferenceRecord)
  }
}
