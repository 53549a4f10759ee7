import type { TestSandbox } from '../sandbox'
import type { FuzzCase } from './fuzz-case'
import { refusalProblems } from './refusal'
import { sendCase, type Answer } from './send'
import { snapshotData, type DataSnapshot } from './snapshot'

export interface CaseRunner {
  /** Sends a case that must be refused; answers what was wrong (empty when all held). */
  refused: (fuzzCase: FuzzCase) => Promise<string[]>
  /**
   * Sends requests that must change nothing (reads) and answers them, with the problems of the
   * data or the server's health that followed.
   */
  reads: (cases: FuzzCase[]) => Promise<{ answers: Answer[]; problems: string[] }>
  /** Changes found between cases: written by a request after it was answered. */
  laterChanges: string[]
}

/**
 * Runs cases one at a time against the sandbox and checks, for each, the properties that hold
 * whatever the defect: the server answers, stays healthy (a cheap valid GET answers 200 after),
 * and the data (every table's rows, the blob store's files) is exactly what it was before. A
 * case that changed the data has its rows put back, so that one defect does not hide or fake
 * another; a change that shows up before the next case (work left running by an answered
 * request) is kept in `laterChanges`, named after the case that caused it.
 */
export function createCaseRunner(sandbox: TestSandbox): CaseRunner {
  const services = sandbox.services
  let last: DataSnapshot = snapshotData(services)
  let lastCase = 'the seed'
  const laterChanges: string[] = []

  const settle = (): DataSnapshot => {
    const now = snapshotData(services, last)
    const drift = now === last ? [] : now.differencesFrom(last)
    if (drift.length > 0) {
      laterChanges.push(`after ${lastCase}:\n  ${drift.join('\n  ')}`)
      last.restore()
      return snapshotData(services)
    }
    return now
  }

  const healthProblems = async (): Promise<string[]> => {
    try {
      const health = await fetch(`${sandbox.url}/v1/health`, {
        headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
        signal: AbortSignal.timeout(30_000),
      })
      await health.text()
      return health.status === 200 ? [] : [`GET /v1/health answered ${health.status} afterwards`]
    } catch (error) {
      return [`GET /v1/health failed afterwards: ${String(error)}`]
    }
  }

  /**
   * After a case that wrote, waits (at most a few seconds) until the work it started stops
   * writing, then puts the rows back: the next case must not be blamed for this one's run
   * finishing in the background. Only a failing case ever waits here.
   */
  const quiet = async (from: DataSnapshot): Promise<DataSnapshot> => {
    let current = from
    let stable = 0
    for (let round = 0; round < 50 && stable < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const now = snapshotData(services, current)
      stable = now === current ? stable + 1 : 0
      current = now
    }
    return current
  }

  const dataProblems = async (before: DataSnapshot): Promise<string[]> => {
    const after = snapshotData(services, before)
    if (after === before || after.differencesFrom(before, 1).length === 0) {
      last = after
      return []
    }
    const settled = await quiet(after)
    const changed = settled.differencesFrom(before)
    before.restore()
    last = snapshotData(services)
    return [`the data changed:\n  ${changed.join('\n  ')}`]
  }

  const send = async (fuzzCase: FuzzCase): Promise<Answer | string> => {
    try {
      return await sendCase(sandbox.url, fuzzCase)
    } catch (error) {
      const cause =
        error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ''
      return `no answer: ${String(error)}${cause}`
    }
  }

  return {
    laterChanges,
    refused: async (fuzzCase) => {
      const before = settle()
      lastCase = `${fuzzCase.operationId} ${fuzzCase.kind} (${fuzzCase.detail.slice(0, 120)})`
      const answer = await send(fuzzCase)
      const problems =
        typeof answer === 'string' ? [answer] : refusalProblems(fuzzCase.expected, answer)
      problems.push(...(await healthProblems()), ...(await dataProblems(before)))
      return problems
    },
    reads: async (cases) => {
      const before = settle()
      const answers: Answer[] = []
      const problems: string[] = []
      for (const fuzzCase of cases) {
        lastCase = `${fuzzCase.operationId} ${fuzzCase.kind} (${fuzzCase.detail.slice(0, 120)})`
        const answer = await send(fuzzCase)
        if (typeof answer === 'string') problems.push(answer)
        else answers.push(answer)
      }
      problems.push(...(await healthProblems()), ...(await dataProblems(before)))
      return { answers, problems }
    },
  }
}
