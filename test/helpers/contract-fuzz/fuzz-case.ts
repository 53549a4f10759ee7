import fc from 'fast-check'
import type { FuzzOperation } from './operations'
import type { ContractSchemas } from './schemas'
import { validValues } from './values'

/** A body as sent: bytes built when sent (big ones are never kept), a form, or a multipart form. */
export type OutgoingBody =
  | { type: 'bytes'; build: () => string | Uint8Array; chunked?: boolean }
  | { type: 'form'; entries: [string, string][] }
  | { type: 'multipart'; entries: [string, string][] }

/** What the contract says the answer to a case must be. */
export interface Expectation {
  /** The statuses the contract allows for this defect (all 4xx). */
  statuses: number[]
  /** When set, an `errors[]` item must carry one of these codes (the documented limit codes). */
  errorCodes?: string[]
  /**
   * Where the defect is (`nodes.0.label`, `limit`): a 422 must name it in `errors[].field`, so
   * that a request refused for some other reason does not pass for this one.
   */
  field?: string
}

/** One request that the contract says must be refused, and why. */
export interface FuzzCase {
  operationId: string
  /** The class of defect, e.g. `missing-required-field`, `bad-limit`. */
  kind: string
  /** What exactly is wrong, in a few words: this is what a failure prints. */
  detail: string
  method: string
  /** Path and query, encoded. */
  target: string
  headers: Record<string, string>
  body: OutgoingBody | undefined
  expected: Expectation
}

/** Everything about the running sandbox and its data that cases are built from. */
export interface FuzzWorld {
  schemas: ContractSchemas
  adminKey: string
  /** Other keys of the organization, with their scopes (for the missing-scope case). */
  otherKeys: { key: string; scopes: ReadonlySet<string> }[]
  /** Organizations the admin key may act in, lower-case. */
  memberOrgIds: ReadonlySet<string>
  /** An existing organization the admin key does not belong to. */
  foreignOrgId: string
  /** Existing values for the path parameters of an operation, by parameter name. */
  pathValues: (operation: FuzzOperation) => Record<string, string>
  /** The values of a path parameter that name something that exists (codes, providers, models). */
  existingValues: (operation: FuzzOperation, parameter: string) => ReadonlySet<string>
  /** Every UUID found anywhere in the data, lower-case: an "unknown" id is none of these. */
  knownIds: ReadonlySet<string>
  /** The fixed segments of every path: a path value equal to one would route elsewhere. */
  staticSegments: ReadonlySet<string>
  /** Bodies the sandbox accepted for the operation while seeding: valid in meaning, not only in form. */
  acceptedBodies: (operation: FuzzOperation) => unknown[]
}

/** The valid parts of a request that a case changes one thing of. */
export interface Frame {
  pathValues: Record<string, string>
  query: [string, string][]
  /** The admin key, and `Content-Type: application/json` when there is a body. */
  headers: Record<string, string>
  /** A body valid against the operation's schema, when the operation takes one. */
  body: unknown
}

/** How a case prints in a fast-check counterexample: short, whatever the size of its body. */
function describeCase(fuzzCase: FuzzCase): string {
  const target =
    fuzzCase.target.length > 160 ? `${fuzzCase.target.slice(0, 160)}…` : fuzzCase.target
  return `${fuzzCase.kind}: ${fuzzCase.detail} (${fuzzCase.method} ${target})`
}

function withDescription(fuzzCase: FuzzCase): FuzzCase {
  return Object.assign(fuzzCase, { [fc.toStringMethod]: () => describeCase(fuzzCase) })
}

/** The path with its values filled in, each encoded as one segment. */
function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/{(\w+)}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`No value for {${name}} in ${path}.`)
    return encodeURIComponent(value)
  })
}

function targetOf(path: string, query: [string, string][]): string {
  if (query.length === 0) return path
  return `${path}?${new URLSearchParams(query).toString()}`
}

const jsonBody = (value: unknown): OutgoingBody => ({
  type: 'bytes',
  build: () => JSON.stringify(value),
})

/**
 * Valid requests of an operation: existing path values, required query parameters, the admin
 * key, and a body valid against the operation's schema (as the contract's validator says).
 */
export function framesOf(operation: FuzzOperation, world: FuzzWorld): fc.Arbitrary<Frame> {
  const { schemas } = world
  const requiredQuery = operation.parameters.filter((p) => p.in === 'query' && p.required)
  const query = fc.tuple(
    ...requiredQuery.map((parameter) =>
      validValues(schemas, parameter.schema)
        .map(String)
        .filter((text) => text.trim() !== '' && schemas.parameterMayBeValid(parameter.schema, text))
        .map((text): [string, string] => [parameter.name, text]),
    ),
  )
  const bodySchema = operation.body?.schema
  const accepted = bodySchema
    ? world.acceptedBodies(operation).filter((value) => schemas.bodyIsValid(bodySchema, value))
    : []
  // Half the frames start from a body the sandbox accepted (a defect then meets the handler's
  // real work), half from one made from the schema (any shape the contract allows).
  const body =
    bodySchema === undefined
      ? fc.constant(undefined)
      : fc.oneof(
          validValues(schemas, bodySchema).filter((value) =>
            schemas.bodyIsValid(bodySchema, value),
          ),
          ...(accepted.length > 0
            ? [fc.constantFrom(...accepted).map((v) => structuredClone(v))]
            : []),
        )
  return fc.record({ query, body }).map(({ query: pairs, body: value }) => ({
    pathValues: world.pathValues(operation),
    query: pairs,
    headers: {
      Authorization: `Bearer ${world.adminKey}`,
      ...(value === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: value,
  }))
}

/** A case from a frame: the frame's parts unless the case replaces them. */
export function caseOf(
  operation: FuzzOperation,
  frame: Frame,
  change: Partial<Omit<FuzzCase, 'operationId'>> & {
    kind: string
    detail: string
    expected: Expectation
    pathValues?: Record<string, string>
    query?: [string, string][]
  },
): FuzzCase {
  const { pathValues, query, ...rest } = change
  const path = fillPath(operation.path, pathValues ?? frame.pathValues)
  return withDescription({
    operationId: operation.operationId,
    method: operation.method,
    target: targetOf(path, query ?? frame.query),
    headers: frame.headers,
    body: frame.body === undefined ? undefined : jsonBody(frame.body),
    ...rest,
  })
}

/** The cases of one class of defect for one operation. */
export interface CaseKind {
  kind: string
  cases: fc.Arbitrary<FuzzCase>
  /** A class with only a few distinct cases (a fixed big body) runs at most this many times. */
  maxRuns?: number
}
