import type { BaseRecord, RecordStore } from '../store'

/**
 * Where flows, their parts, workflows and solutions are stored. `flows` holds each flow whole
 * (nodes with their inputs and outputs, flow inputs, flow outputs): the run engine reads the
 * graph from there. The parts are also stored on their own, kept in step, so the generic list
 * engine serves their lists and `any`.
 */
export const COLLECTIONS = {
  flows: 'flows',
  /** parent: the flow */
  flowNodes: 'flow_nodes',
  /** parent: the node */
  flowNodeInputs: 'flow_node_inputs',
  /** parent: the node */
  flowNodeOutputs: 'flow_node_outputs',
  /** parent: the flow */
  flowInputs: 'flow_inputs',
  /** parent: the flow */
  flowOutputs: 'flow_outputs',
  /** parent: the flow. No operation gives stars (the sandbox has no users); read newest first. */
  flowStars: 'flow_stars',
  /** global */
  flowTemplates: 'flow_templates',
  /** the organization's, plus global samples */
  workflows: 'wfengine_workflows',
  /** parent: the workflow */
  workflowInputs: 'wfengine_workflow_inputs',
  /** parent: the workflow */
  workflowOutputs: 'wfengine_workflow_outputs',
  /** global, keyed by code */
  builtinNodes: 'builtin_nodes',
  /** global */
  solutions: 'solutions',
  /** global; parent: the solution */
  solutionFlows: 'solution_flows',
  /** global; parent: the solution */
  solutionModels: 'solution_models',
  /** global; parent: the solution */
  solutionWorkflows: 'solution_workflows',
} as const

interface Holder {
  org_id: string | null
  parent_id: string | null
  deleted_at: string | null
}

/**
 * What the store's generic operations do not cover for records with client-chosen ids: a kept or
 * re-added record writes over its own row (a node removed by one graph replacement and put back
 * by the next one keeps its id), and slugs are looked up.
 */
export class AuthoringRecords {
  constructor(readonly store: RecordStore) {}

  /** Who holds `id` in a collection, live or deleted, in any organization. */
  holder(collection: string, id: string): Holder | undefined {
    return this.store
      .prepared('SELECT org_id, parent_id, deleted_at FROM records WHERE collection = ? AND id = ?')
      .get(collection, id) as Holder | undefined
  }

  /**
   * Writes a record under its parent: a new row, or over the row with its id, which must be the
   * organization's (callers check with `holder` first and answer 409 otherwise).
   */
  put(collection: string, orgId: string, record: BaseRecord, parentId: string): void {
    const result = this.store
      .prepared(
        `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, deleted_at, doc)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
       ON CONFLICT (collection, id) DO UPDATE SET parent_id = excluded.parent_id,
         created_at = excluded.created_at, updated_at = excluded.updated_at, deleted_at = NULL,
         doc = excluded.doc
       WHERE records.org_id = excluded.org_id`,
      )
      .run(
        collection,
        record.id,
        orgId,
        parentId,
        record.created_at,
        record.updated_at,
        JSON.stringify(record),
      )
    if (result.changes !== 1) {
      throw new Error(`${collection} ${record.id} belongs to another organization`)
    }
  }

  /** Soft-deletes records of the organization (no tombstones: the parent's carries the news). */
  remove(collection: string, orgId: string, ids: Iterable<string>): void {
    for (const id of ids) {
      if (this.store.get(collection, id, orgId)) this.store.remove(collection, id, orgId)
    }
  }

  /** The live record with this slug: the organization's, or a global one when orgId is null. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the type it stored
  bySlug<T extends BaseRecord>(
    collection: string,
    orgId: string | null,
    slug: string,
  ): T | undefined {
    const row = this.store
      .prepared(
        `SELECT doc FROM records WHERE collection = ? AND org_id IS ? AND deleted_at IS NULL
         AND json_extract(doc, '$.slug') = ? LIMIT 1`,
      )
      .get(collection, orgId, slug) as { doc: string } | undefined
    return row ? (JSON.parse(row.doc) as T) : undefined
  }
}
