import type { FieldProblem } from '../../errors'
import { isCatalogCode } from '../../models'
import { stampRecord } from './stamp'
import type { GraphContext, RecordKind } from './types'

/**
 * What the phases of one `buildFlowGraph` call share: the caller's context, the problems found so
 * far (in the order the phases find them, which is the order the client reads them in), and the
 * ids seen so far (ids are checked across the whole request, since edges may point anywhere).
 */
export interface GraphBuild {
  readonly context: GraphContext
  readonly problems: FieldProblem[]
  problem: (field: string, code: string, message: string) => void
  /** The given id (refused when another part of the request has it already), or a new one. */
  idOf: (given: string | undefined, path: string) => string
  /** A record with its timestamps: new, kept as stored, or renewed when it changed. */
  stamp: <T extends object>(
    kind: RecordKind,
    id: string,
    build: (createdAt: string, updatedAt: string) => T,
  ) => T
  /** Refuses a code the service's catalog does not list; null and left out pass. */
  checkCode: (
    catalog: 'variable-types' | 'validators' | 'variable-behaviors',
    code: string | null | undefined,
    field: string,
  ) => void
  /** Refuses a name used by an earlier item of the same list, naming that item. */
  uniqueNames: (items: readonly { name: string }[], path: string, what: string) => void
}

export function startBuild(context: GraphContext): GraphBuild {
  const problems: FieldProblem[] = []
  const problem = (field: string, code: string, message: string) => {
    problems.push({ field, code, message })
  }

  const seenIds = new Map<string, string>()
  const idOf = (given: string | undefined, path: string): string => {
    if (given === undefined) return context.newId()
    const earlier = seenIds.get(given)
    if (earlier) {
      problem(
        `${path}.id`,
        'duplicate',
        `${path}.id repeats the id of ${earlier}; every node, input and output of a flow needs its own id.`,
      )
    } else {
      seenIds.set(given, path)
    }
    return given
  }

  const stamp: GraphBuild['stamp'] = (kind, id, build) =>
    stampRecord(context.existing.get(`${kind}:${id}`), context.now, build)

  const checkCode: GraphBuild['checkCode'] = (catalog, code, field) => {
    if (code === undefined || code === null || isCatalogCode(catalog, code)) return
    problem(
      field,
      'unknown_code',
      `${field} ${JSON.stringify(code)} is not a code of /v1/catalogs/${catalog}; use one listed there.`,
    )
  }

  const uniqueNames: GraphBuild['uniqueNames'] = (items, path, what) => {
    const seen = new Map<string, number>()
    items.forEach((item, index) => {
      const first = seen.get(item.name)
      if (first === undefined) seen.set(item.name, index)
      else {
        problem(
          `${path}.${index}.name`,
          'duplicate',
          `${path}.${index}.name ${JSON.stringify(item.name)} is already the name of ${path}.${first}; ${what} names must be unique.`,
        )
      }
    })
  }

  return { context, problems, problem, idOf, stamp, checkCode, uniqueNames }
}
