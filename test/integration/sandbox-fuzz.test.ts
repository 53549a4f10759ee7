/**
 * A contract fuzzer over every operation of `resources/openapi.yaml` (issue 17).
 *
 * Every operation of the contract is read from the contract itself (nothing is listed here) and
 * gets every class of bad request that applies to it: no or wrong credentials, a foreign
 * organization, a missing scope, a request line over the limit, malformed and unknown path
 * values, query values outside their schemas, bad `q`, `sort_by`, `fields` and cursors, and for
 * bodies: the wrong JSON type, a required field left out, an unknown field, a field of the wrong
 * type or out of range, nesting past the depth limit (65 to 5,000 deep), a string over 1 MiB, a
 * body over 16 MiB, the wrong content type, no body, and JSON that does not parse. Each is a
 * request the contract says must be refused, and for each the fuzzer checks that the answer is
 * a 4xx of the documented statuses with the error envelope and `Service-Request-Id`, that the
 * sandbox still answers a valid GET, and that every row of its database and every file of its
 * blob store is exactly what it was before. A separate property sends existing ids spelled in
 * upper case (the contract admits them) and expects the same answer as in lower case.
 *
 * Bounded for `npm test`: each class of each operation runs `FUZZ_RUNS` cases (default 1).
 *   FUZZ_RUNS=20 npx vitest run test/integration/sandbox-fuzz.test.ts   a longer run
 *   FUZZ_SEED=1234 …  (or FUZZ_SEED=random, printed)                      another (or a failing) seed
 * The default seed is fixed, so `npm test` is deterministic; a failure prints the seed, the
 * shrunk counterexample and the command that replays it. FUZZ_REPORT=<file> writes every
 * failure as one JSON line, for reading many at once.
 */
import { appendFileSync } from 'node:fs'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadContract } from '../../src-main/sandbox/contract'
import { createCaseRunner, type CaseRunner } from '../helpers/contract-fuzz/case-runner'
import { caseKindsOf } from '../helpers/contract-fuzz/case-kinds'
import type { CaseKind, FuzzCase, FuzzWorld } from '../helpers/contract-fuzz/fuzz-case'
import { contractOperations, type FuzzOperation } from '../helpers/contract-fuzz/operations'
import { contractSchemas } from '../helpers/contract-fuzz/schemas'
import { isUuidSchema, recase } from '../helpers/contract-fuzz/uuid-spelling'
import { buildWorld } from '../helpers/contract-fuzz/world'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 1))
const SEED =
  process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 17)
const REPORT = process.env.FUZZ_REPORT

const document = loadContract().document
const operations = contractOperations(document)
const schemas = contractSchemas(document)

let sandbox: TestSandbox
let world: FuzzWorld
let runner: CaseRunner
let closeWorld: () => Promise<void>
/** operationId → the classes of defect that ran for it. */
const ran = new Map<string, Set<string>>()
/** operationId → the classes that apply to it. */
const planned = new Map<string, string[]>()
/** Requests sent as cases, and as shrinking steps of failed ones. */
const sent = { cases: 0, shrinks: 0, started: Date.now() }

beforeAll(async () => {
  sandbox = await startTestSandbox()
  const built = await buildWorld(sandbox, operations, schemas)
  world = built.world
  closeWorld = built.close
  runner = createCaseRunner(sandbox)
}, 120_000)

afterAll(async () => {
  await closeWorld()
  await sandbox.close()
})

/** A seed per operation and class, from the run's seed: one class replays without the others. */
function seedOf(...parts: string[]): number {
  let hash = SEED >>> 0
  for (const char of parts.join('/')) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0
  return hash | 0
}

function replayHint(operation: FuzzOperation): string {
  return `replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npx vitest run test/integration/sandbox-fuzz.test.ts -t '${operation.operationId} '`
}

/** Runs one class's property; answers fast-check's report when it failed. */
async function checkKind(operation: FuzzOperation, kind: CaseKind): Promise<string | null> {
  const details = await fc.check(
    fc.asyncProperty(kind.cases, async (fuzzCase: FuzzCase) => {
      const problems = await runner.refused(fuzzCase)
      if (problems.length > 0) throw new Error(problems.join('\n'))
    }),
    {
      numRuns: Math.min(RUNS, kind.maxRuns ?? RUNS),
      seed: seedOf(operation.operationId, kind.kind),
    },
  )
  ran.get(operation.operationId)?.add(kind.kind)
  sent.cases += details.numRuns
  sent.shrinks += details.numShrinks
  if (!details.failed) return null
  const report = failureReport(details)
  if (REPORT) {
    appendFileSync(
      REPORT,
      `${JSON.stringify({
        operationId: operation.operationId,
        method: operation.method,
        path: operation.path,
        kind: kind.kind,
        counterexample: details.counterexample?.map((value) => fc.stringify(value)),
        error: details.errorInstance instanceof Error ? details.errorInstance.message : null,
        seed: details.seed,
        path_in_run: details.counterexamplePath,
      })}\n`,
    )
  }
  return `${kind.kind}:\n${report}`
}

describe('contract fuzzer', () => {
  it('reads every operation of the contract, under every HTTP method', () => {
    const fromContract = loadContract()
      .operations.map((op) => `${op.method} ${op.path} ${op.operationId}`)
      .sort()
    const fuzzed = operations.map((op) => `${op.method} ${op.path} ${op.operationId}`).sort()
    expect(fuzzed).toEqual(fromContract)
    // Every operation has a unique id, or the coverage check below could be fooled.
    expect(new Set(operations.map((op) => op.operationId)).size).toBe(operations.length)
  })

  it('sees a change when there is one, and none after a read', async () => {
    const updateFlow = operations.find((op) => op.operationId === 'updateFlow')
    if (!updateFlow) throw new Error('The contract has no updateFlow to check the runner with.')
    const flow = world.pathValues(updateFlow)
    const read = await runner.reads([
      {
        operationId: 'getFlow',
        kind: 'control',
        detail: 'a valid read',
        method: 'GET',
        target: `/v1/flows/${flow.flow_id ?? ''}`,
        headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
        body: undefined,
        expected: { statuses: [200] },
      },
    ])
    expect(read.problems).toEqual([])
    expect(read.answers[0]?.status).toBe(200)
    // A valid write, sent as a "refused" case: the runner must report the change and undo it.
    const write = await runner.refused({
      operationId: 'updateFlow',
      kind: 'control',
      detail: 'a valid write',
      method: 'PATCH',
      target: `/v1/flows/${flow.flow_id ?? ''}`,
      headers: {
        Authorization: `Bearer ${sandbox.keys.admin}`,
        'Content-Type': 'application/json',
      },
      body: { type: 'bytes', build: () => JSON.stringify({ description: 'Changed on purpose.' }) },
      expected: { statuses: [422] },
    })
    expect(write.join('\n')).toMatch(/answered 200/)
    expect(write.join('\n')).toMatch(/the data changed:\n {2}records .*flows/)
    const again = await runner.reads([
      {
        operationId: 'getFlow',
        kind: 'control',
        detail: 'a valid read',
        method: 'GET',
        target: `/v1/flows/${flow.flow_id ?? ''}`,
        headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
        body: undefined,
        expected: { statuses: [200] },
      },
    ])
    expect(again.problems).toEqual([])
    expect(again.answers[0]?.json).toEqual(read.answers[0]?.json)
  })

  for (const operation of operations) {
    const { operationId } = operation
    it(
      `${operationId} refuses every bad request of ${operation.method} ${operation.path}, unchanged and healthy`,
      async () => {
        const kinds = caseKindsOf(operation, world)
        planned.set(
          operationId,
          kinds.map((kind) => kind.kind),
        )
        ran.set(operationId, new Set())
        const failures: string[] = []
        for (const kind of kinds) {
          const failure = await checkKind(operation, kind)
          if (failure) failures.push(failure)
        }
        if (failures.length > 0) {
          throw new Error(
            `${operation.method} ${operation.path}: ${failures.length} of ${kinds.length} classes failed (${replayHint(operation)})\n\n${failures.join('\n\n')}`,
          )
        }
      },
      Math.max(60_000, RUNS * 60_000),
    )
  }

  const readable = operations.filter(
    (op) =>
      op.method === 'GET' &&
      op.parameters.some((p) => p.in === 'path' && isUuidSchema(schemas, p.schema)),
  )
  it(
    'answers an existing id spelled in upper case like the lower-case one',
    async () => {
      const failures: string[] = []
      for (const operation of readable) {
        const names = operation.parameters
          .filter((p) => p.in === 'path' && isUuidSchema(schemas, p.schema))
          .map((p) => p.name)
        const details = await fc.check(
          fc.asyncProperty(
            fc.constantFrom(...names),
            fc.array(fc.boolean(), { minLength: 36, maxLength: 36 }),
            async (name, mask) => {
              const values = world.pathValues(operation)
              const lower = values[name] ?? ''
              const upper = recase(lower, mask)
              fc.pre(upper !== lower)
              const target = (value: string) =>
                operation.path.replace(/{(\w+)}/g, (_, n: string) =>
                  encodeURIComponent(n === name ? value : (values[n] ?? '')),
                )
              const request = (value: string): FuzzCase => ({
                operationId: operation.operationId,
                kind: 'upper-case-id',
                detail: `{${name}} is ${value}`,
                method: 'GET',
                target: target(value),
                headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
                body: undefined,
                expected: { statuses: [200] },
              })
              // Lower, upper, lower: what differs between the two lower-case reads (an expiry
              // stamped at each read) is no difference of spelling.
              const { answers, problems } = await runner.reads([
                request(lower),
                request(upper),
                request(lower),
              ])
              const [first, second, third] = answers
              if (problems.length > 0 || !first || !second || !third) {
                throw new Error(problems.join('\n'))
              }
              if (first.status !== 200) {
                throw new Error(
                  `the lower-case id answered ${first.status}: ${first.text.slice(0, 200)}`,
                )
              }
              if (second.status !== first.status) {
                throw new Error(
                  `{${name}} ${upper} answered ${second.status} (${second.text.slice(0, 200)}); in lower case ${first.status}`,
                )
              }
              const volatile = new Set(differences(comparable(first.json), comparable(third.json)))
              const spelled = differences(comparable(first.json), comparable(second.json))
              expect(spelled.filter((path) => !volatile.has(path))).toEqual([])
            },
          ),
          { numRuns: Math.max(1, RUNS), seed: seedOf(operation.operationId, 'upper-case-id') },
        )
        if (details.failed) {
          failures.push(`${operation.operationId}: ${failureReport(details)}`)
        }
      }
      expect(failures, failures.join('\n\n')).toEqual([])
    },
    120_000 * RUNS,
  )

  it('ran every class of every operation of the contract, and no request changed data later', () => {
    const missing: string[] = []
    for (const operation of operations) {
      const classes = planned.get(operation.operationId)
      if (!classes) {
        missing.push(`${operation.operationId}: not fuzzed`)
        continue
      }
      if (classes.length === 0) missing.push(`${operation.operationId}: no class of defect applies`)
      const done = ran.get(operation.operationId) ?? new Set()
      for (const kind of classes)
        if (!done.has(kind)) missing.push(`${operation.operationId}: ${kind}`)
    }
    const seconds = ((Date.now() - sent.started) / 1000).toFixed(0)
    const classes = [...planned.values()].reduce((sum, list) => sum + list.length, 0)
    console.log(
      `contract fuzzer: ${sent.cases} cases (+${sent.shrinks} shrinking steps) in ${classes} classes over ${ran.size} operations, ${seconds} s, FUZZ_RUNS=${RUNS} FUZZ_SEED=${SEED}`,
    )
    expect(missing).toEqual([])
    expect([...ran.keys()].sort()).toEqual(operations.map((op) => op.operationId).sort())
    expect(runner.laterChanges).toEqual([])
  })
})

/** fast-check's report (seed, path, shrunk counterexample) and what the property found. */
function failureReport<T>(details: fc.RunDetails<T>): string {
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : ''
  return `${fc.defaultReportMessage(details) ?? 'failed'}\n${error}`
}

/** The paths at which two JSON values differ. */
function differences(a: unknown, b: unknown, path = '$'): string[] {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    if (Array.isArray(a) !== Array.isArray(b)) return [path]
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].flatMap((key) =>
      differences(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
      ),
    )
  }
  return Object.is(a, b) ? [] : [path]
}

/** An answer without what differs between two identical reads: presigned URLs' expiry, cursors. */
function comparable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null), (key, item: unknown) => {
    if (['first', 'next', 'previous'].includes(key) && typeof item === 'string') return '<cursor>'
    if (typeof item === 'string') return item.replace(/([?&])(expires|signature)=[^&]*/g, '$1$2=…')
    return item
  }) as unknown
}
