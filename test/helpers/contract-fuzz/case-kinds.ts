import { bodyCaseKinds } from './body-cases'
import { framesOf, type CaseKind, type FuzzWorld } from './fuzz-case'
import type { FuzzOperation } from './operations'
import { pathCaseKinds } from './path-cases'
import { queryCaseKinds } from './query-cases'
import { requestCaseKinds } from './request-cases'

/**
 * Every class of defect that applies to an operation, as the contract describes it: the
 * request's credentials and size, its path values, its query, its body. Which classes apply
 * follows from the operation's parameters and schemas alone.
 */
export function caseKindsOf(operation: FuzzOperation, world: FuzzWorld): CaseKind[] {
  const frames = framesOf(operation, world)
  return [
    ...requestCaseKinds(operation, world, frames),
    ...pathCaseKinds(operation, world, frames),
    ...queryCaseKinds(operation, world, frames),
    ...bodyCaseKinds(operation, world, frames),
  ]
}
