import type Database from 'better-sqlite3'

/** Local flows belong to the profile and organization they were made under. */
export interface LocalFlowScope {
  profile: string
  orgId: string
}

/** What a save writes: the flow file and what the list shows of it, read from the file. */
export interface LocalFlowContent {
  name: string
  description: string | null
  nodeCount: number
  /** The whole flow file; its `id` is the local flow's. */
  flow: Record<string, unknown>
}

export interface LocalFlowSummary {
  id: string
  profile: string
  orgId: string
  name: string
  description: string | null
  nodeCount: number
  createdMs: number
  updatedMs: number
  /** When it went to the trash; null while it is not there. */
  deletedMs: number | null
}

export interface LocalFlowRecord extends LocalFlowSummary {
  flow: Record<string, unknown>
}

export interface LocalFlowVersion {
  flowId: string
  version: number
  name: string
  createdMs: number
}

export interface LocalFlowVersionRecord extends LocalFlowVersion {
  flow: Record<string, unknown>
}

/** How a conditional write went: refused when the flow is gone or was saved since. */
export type LocalFlowWrite =
  | { ok: true; updatedMs: number }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'conflict'; updatedMs: number }

interface SummaryRow {
  id: string
  profile: string
  org_id: string
  name: string
  description: string | null
  node_count: number
  created_ms: number
  updated_ms: number
  deleted_ms: number | null
}

interface FlowRow extends SummaryRow {
  flow_json: string
}

interface VersionRow {
  flow_id: string
  version: number
  name: string
  created_ms: number
}

const SUMMARY_COLUMNS = `id, profile, org_id, name, description, node_count, created_ms,
  updated_ms, deleted_ms`

/**
 * The flows made on this machine and their named versions, in the ledger: the service does not
 * know them, so nothing may drop them. Saves are conditional (`baseUpdatedMs`) in the statement
 * itself, so two windows saving the same flow cannot both win; `updated_ms` only ever grows, by
 * at least 1 per write, so a save in the same millisecond as the last still tells them apart.
 */
export class LocalFlowsRepository {
  private readonly insert: Database.Statement
  private readonly byId: Database.Statement
  private readonly inScope: Database.Statement
  private readonly write: Database.Statement
  private readonly toTrash: Database.Statement
  private readonly fromTrash: Database.Statement
  private readonly purge: Database.Statement
  private readonly versionsOf: Database.Statement
  private readonly versionOf: Database.Statement
  private readonly insertVersion: Database.Statement

  constructor(
    db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.insert = db.prepare(`
      INSERT INTO local_flows (id, profile, org_id, name, description, node_count, flow_json,
        created_ms, updated_ms)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    this.byId = db.prepare(`
      SELECT ${SUMMARY_COLUMNS}, flow_json FROM local_flows
      WHERE id = ? AND profile = ? AND org_id = ?`)
    this.inScope = db.prepare(`
      SELECT ${SUMMARY_COLUMNS} FROM local_flows
      WHERE profile = ? AND org_id = ? AND deleted_ms IS NULL
      ORDER BY updated_ms DESC, id`)
    // The base is bound twice: once to tell "no base" apart, once to compare.
    this.write = db
      .prepare(
        `
      UPDATE local_flows SET name = ?, description = ?, node_count = ?, flow_json = ?,
        updated_ms = max(?, updated_ms + 1)
      WHERE id = ? AND profile = ? AND org_id = ? AND deleted_ms IS NULL
        AND (? IS NULL OR updated_ms <= ?)
      RETURNING updated_ms`,
      )
      .pluck()
    this.toTrash = db.prepare(`
      UPDATE local_flows SET deleted_ms = ?
      WHERE id = ? AND profile = ? AND org_id = ? AND deleted_ms IS NULL`)
    this.fromTrash = db.prepare(`
      UPDATE local_flows SET deleted_ms = NULL, updated_ms = max(?, updated_ms + 1)
      WHERE id = ? AND profile = ? AND org_id = ? AND deleted_ms IS NOT NULL`)
    this.purge = db.prepare(
      `DELETE FROM local_flows WHERE deleted_ms IS NOT NULL AND deleted_ms < ?`,
    )
    this.versionsOf = db.prepare(`
      SELECT flow_id, version, name, created_ms FROM local_flow_versions
      WHERE flow_id = ? ORDER BY version DESC`)
    this.versionOf = db.prepare(`
      SELECT flow_id, version, name, created_ms, flow_json FROM local_flow_versions
      WHERE flow_id = ? AND version = ?`)
    this.insertVersion = db
      .prepare(
        `
      INSERT INTO local_flow_versions (flow_id, version, name, flow_json, created_ms)
      SELECT ?, coalesce(max(version), 0) + 1, ?, ?, ? FROM local_flow_versions WHERE flow_id = ?
      RETURNING version`,
      )
      .pluck()
  }

  create(scope: LocalFlowScope, id: string, content: LocalFlowContent): LocalFlowRecord {
    const now = this.clock()
    this.insert.run(
      id,
      scope.profile,
      scope.orgId,
      content.name,
      content.description,
      content.nodeCount,
      JSON.stringify(content.flow),
      now,
      now,
    )
    return { ...summary(scope, id, content, now), flow: content.flow }
  }

  /** The flow, in the trash or not; null when the scope has no flow with that id. */
  get(scope: LocalFlowScope, id: string): LocalFlowRecord | null {
    const row = this.byId.get(id, scope.profile, scope.orgId) as FlowRow | undefined
    return row
      ? { ...toSummary(row), flow: JSON.parse(row.flow_json) as Record<string, unknown> }
      : null
  }

  /** The scope's flows outside the trash, the latest saved first. */
  list(scope: LocalFlowScope): LocalFlowSummary[] {
    return (this.inScope.all(scope.profile, scope.orgId) as SummaryRow[]).map(toSummary)
  }

  /**
   * Replaces the flow file (and what is read from it). With `baseUpdatedMs`, only when nothing
   * was saved after it. A flow in the trash is `missing`: restore it first.
   */
  update(
    scope: LocalFlowScope,
    id: string,
    content: LocalFlowContent,
    baseUpdatedMs?: number,
  ): LocalFlowWrite {
    const base = baseUpdatedMs ?? null
    const updatedMs = this.write.get(
      content.name,
      content.description,
      content.nodeCount,
      JSON.stringify(content.flow),
      this.clock(),
      id,
      scope.profile,
      scope.orgId,
      base,
      base,
    ) as number | undefined
    if (updatedMs !== undefined) return { ok: true, updatedMs }
    const current = this.get(scope, id)
    if (!current || current.deletedMs !== null) return { ok: false, reason: 'missing' }
    return { ok: false, reason: 'conflict', updatedMs: current.updatedMs }
  }

  /** Moves it to the trash; false when it is not there to move (gone, or already in the trash). */
  trash(scope: LocalFlowScope, id: string): boolean {
    return this.toTrash.run(this.clock(), id, scope.profile, scope.orgId).changes > 0
  }

  /** Takes it out of the trash, as the latest saved; false when it was not in the trash. */
  restore(scope: LocalFlowScope, id: string): boolean {
    return this.fromTrash.run(this.clock(), id, scope.profile, scope.orgId).changes > 0
  }

  /** Deletes for good what went to the trash before then, with its versions. */
  purgeTrash(deletedBeforeMs: number): number {
    return this.purge.run(deletedBeforeMs).changes
  }

  /** The flow's named versions, the newest first. */
  versions(flowId: string): LocalFlowVersion[] {
    return (this.versionsOf.all(flowId) as VersionRow[]).map(toVersion)
  }

  version(flowId: string, version: number): LocalFlowVersionRecord | null {
    const row = this.versionOf.get(flowId, version) as
      (VersionRow & { flow_json: string }) | undefined
    return row
      ? { ...toVersion(row), flow: JSON.parse(row.flow_json) as Record<string, unknown> }
      : null
  }

  /** Keeps this flow file as the flow's next version (numbered from 1). */
  addVersion(flowId: string, name: string, flow: Record<string, unknown>): LocalFlowVersion {
    const createdMs = this.clock()
    const version = this.insertVersion.get(
      flowId,
      name,
      JSON.stringify(flow),
      createdMs,
      flowId,
    ) as number
    return { flowId, version, name, createdMs }
  }
}

function summary(
  scope: LocalFlowScope,
  id: string,
  content: LocalFlowContent,
  now: number,
): LocalFlowSummary {
  return {
    id,
    profile: scope.profile,
    orgId: scope.orgId,
    name: content.name,
    description: content.description,
    nodeCount: content.nodeCount,
    createdMs: now,
    updatedMs: now,
    deletedMs: null,
  }
}

function toSummary(row: SummaryRow): LocalFlowSummary {
  return {
    id: row.id,
    profile: row.profile,
    orgId: row.org_id,
    name: row.name,
    description: row.description,
    nodeCount: row.node_count,
    createdMs: row.created_ms,
    updatedMs: row.updated_ms,
    deletedMs: row.deleted_ms,
  }
}

function toVersion(row: VersionRow): LocalFlowVersion {
  return { flowId: row.flow_id, version: row.version, name: row.name, createdMs: row.created_ms }
}
