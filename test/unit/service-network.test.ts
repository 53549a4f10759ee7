import { describe, expect, it } from 'vitest'
import {
  describeNetworkFailure,
  failedBeforeSending,
  networkCodes,
} from '../../src-main/service/network'

// The shape undici gives: TypeError('fetch failed', { cause: <socket error> }).
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause })
}

function withCode(code: string): Error {
  return Object.assign(new Error(code), { code })
}

describe('network failures', () => {
  it('knows a refused connection sent nothing', () => {
    const error = fetchFailed(withCode('ECONNREFUSED'))
    expect(failedBeforeSending(error)).toBe(true)
    expect(describeNetworkFailure(error)).toBe('connection refused')
  })

  it('reads every address of a happy-eyeballs AggregateError', () => {
    const refused = Object.assign(
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      {
        code: 'ECONNREFUSED',
      },
    )
    expect(failedBeforeSending(fetchFailed(refused))).toBe(true)
    const mixed = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNRESET')])
    expect(failedBeforeSending(fetchFailed(mixed))).toBe(false)
  })

  it.each(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UNKNOWN_THING'])(
    'treats %s as possibly sent',
    (code) => {
      expect(failedBeforeSending(fetchFailed(withCode(code)))).toBe(false)
    },
  )

  it('treats an error without any code as possibly sent', () => {
    expect(failedBeforeSending(new Error('weird'))).toBe(false)
    expect(describeNetworkFailure(new Error('weird'))).toBe('network failure')
  })

  it('follows the cause chain and survives a cycle', () => {
    const inner = withCode('UND_ERR_SOCKET')
    const outer = fetchFailed(inner)
    ;(inner as Error & { cause?: unknown }).cause = outer
    expect(networkCodes(outer)).toEqual(['UND_ERR_SOCKET'])
    expect(describeNetworkFailure(outer)).toBe('connection closed by the other side')
  })
})
