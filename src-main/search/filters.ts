import { Conditions } from '../db'
import type { SearchKind, SearchQuery } from '../../src-shared/domain/search'

/** WHERE fragments and their values; every one here starts with the organization's. */
export type Where = Conditions

/** An asset folder filter, resolved: a folder's id, or the root (assets in no folder). */
export type FolderFilter = { id: string } | 'root'

export interface Scope {
  orgId: string
  /** Set when the query names a folder. */
  folder?: FolderFilter
}

/** The table each kind's records live in; `alias` is how the statements name its rows. */
export const TABLE: Record<SearchKind, string> = {
  runs: 'runs',
  evaluations: 'evaluations',
  assets: 'assets',
}

export interface Filters {
  /** Every filter, the organization first. */
  where: Where
  /**
   * Conditions each of which one of the kind's list indexes (org, a filter, created) answers
   * without reading rows; empty when the filters are the organization alone or no index
   * answers them. What passes all of them is a superset of what passes `where`.
   */
  indexed: Where[]
  /** Anything beyond the organization narrows the records down. */
  filtered: boolean
}

/** The query's filters as conditions on one kind's table (`alias`). */
export function filtersOf(
  kind: SearchKind,
  alias: string,
  query: SearchQuery,
  scope: Scope,
): Filters {
  const where = new Conditions().add(`${alias}.org_id = ?`, scope.orgId)
  const dated: [string, ...unknown[]][] = []
  if (query.fromMs !== undefined) dated.push([`${alias}.created_ms >= ?`, query.fromMs])
  if (query.toMs !== undefined) dated.push([`${alias}.created_ms < ?`, query.toMs])
  for (const [clause, ...values] of dated) where.add(clause, ...values)
  const indexed: Where[] = []
  /** A filter one list index answers, with the dates (its index is sorted by created). */
  const byIndex = (clause: string, ...values: unknown[]) => {
    where.add(clause, ...values)
    const condition = new Conditions()
      .add(`${alias}.org_id = ?`, scope.orgId)
      .add(clause, ...values)
    for (const [date, ...bound] of dated) condition.add(date, ...bound)
    indexed.push(condition)
  }
  if (kind === 'runs') {
    if (query.status !== undefined) byIndex(`${alias}.status_code = ?`, query.status)
    if (query.model !== undefined) byIndex(`${alias}.model_slug = ?`, query.model)
  }
  if (kind === 'evaluations') {
    if (query.status !== undefined) byIndex(`${alias}.status_code = ?`, query.status)
    if (query.verdict !== undefined) {
      byIndex(`${alias}.overall_passed = ?`, query.verdict === 'passed' ? 1 : 0)
    }
    // Evaluations name their model by id; the organization's view of the catalog has its slug.
    if (query.model !== undefined) {
      where.add(
        `${alias}.model_id IN (SELECT id FROM models WHERE org_id = ? AND slug = ?)`,
        scope.orgId,
        query.model,
      )
    }
    if (query.feedback === 'positive') where.add(`${alias}.feedback_is_positive = 1`)
    if (query.feedback === 'negative') where.add(`${alias}.feedback_is_positive = 0`)
    if (query.feedback === 'none') where.add(`${alias}.feedback_is_positive IS NULL`)
  }
  if (kind === 'assets') {
    if (scope.folder === 'root') byIndex(`${alias}.folder_id IS NULL`)
    else if (scope.folder !== undefined) byIndex(`${alias}.folder_id = ?`, scope.folder.id)
    if (query.mediaType !== undefined) where.add(`${alias}.media_type = ?`, query.mediaType)
  }
  if (indexed.length === 0 && dated.length > 0) {
    const condition = new Conditions().add(`${alias}.org_id = ?`, scope.orgId)
    for (const [date, ...bound] of dated) condition.add(date, ...bound)
    indexed.push(condition)
  }
  return { where, indexed, filtered: where.clauses.length > 1 }
}
