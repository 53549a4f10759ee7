import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox

beforeAll(async () => {
  sandbox = await startTestSandbox()
})

afterAll(async () => {
  await sandbox.close()
})

describe('the sandbox', () => {
  it('has a handler for every operation of the contract: nothing answers 501', () => {
    const missing = sandbox.services.contract.operations
      .map((operation) => operation.operationId)
      .filter((operationId) => !sandbox.implemented.has(operationId))
    expect(missing).toEqual([])
  })

  it('has no handler for an operation the contract does not have', () => {
    const known = new Set(sandbox.services.contract.operations.map((op) => op.operationId))
    expect([...sandbox.implemented].filter((operationId) => !known.has(operationId))).toEqual([])
  })
})
