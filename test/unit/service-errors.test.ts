import { describe, expect, it } from 'vitest'
import {
  formatDuration,
  httpErrorMessage,
  isServiceError,
  parseErrorEnvelope,
  ServiceError,
} from '../../src-main/service/errors'

describe('parseErrorEnvelope', () => {
  it('reads a full envelope', () => {
    const body = JSON.stringify({
      code: 'VALIDATION_ERROR',
      message: 'Invalid input',
      errors: [{ field: 'limit' }, 'stray', null, [1]],
    })
    expect(parseErrorEnvelope(body)).toEqual({
      code: 'VALIDATION_ERROR',
      serviceMessage: 'Invalid input',
      errors: [{ field: 'limit' }],
    })
  })

  it.each([
    ['HTML', '<html><body>502</body></html>'],
    ['plain text', 'Service Unavailable'],
    ['an array', '[{"code":"X"}]'],
    ['a string', '"X"'],
    ['a number', '42'],
    ['null', 'null'],
    ['cut-off JSON', '{"code":"X","mess'],
    ['nothing', ''],
  ])('gives no fields for %s', (_what, text) => {
    expect(parseErrorEnvelope(text)).toEqual({ code: null, serviceMessage: null, errors: null })
  })

  it('ignores fields of the wrong type', () => {
    expect(parseErrorEnvelope('{"code":5,"message":["m"],"errors":{"a":1}}')).toEqual({
      code: null,
      serviceMessage: null,
      errors: null,
    })
  })
})

describe('httpErrorMessage', () => {
  it('names the code and what to do', () => {
    expect(httpErrorMessage(401, 'UNAUTHORIZED', 'whatever')).toBe(
      'The service rejected the API key (UNAUTHORIZED). Check the key of this profile.',
    )
    expect(httpErrorMessage(402, 'INSUFFICIENT_CREDIT', null)).toContain('top up')
    expect(httpErrorMessage(403, 'EMAIL_NOT_VERIFIED', null)).toContain('Confirm the email')
  })

  it('falls back on the status for unknown codes', () => {
    expect(httpErrorMessage(404, 'HTTP_404', null)).toMatch(/^The service did not find/)
    expect(httpErrorMessage(418, 'HTTP_418', null)).toMatch(/^The service refused the request/)
    expect(httpErrorMessage(599, 'HTTP_599', null)).toMatch(/^The service failed/)
    expect(httpErrorMessage(301, 'HTTP_301', null)).toContain('service address')
  })

  it("adds the service's own words where they describe the request, on one short line", () => {
    const long = `limit\n  must be\tat most 500 ${'x'.repeat(1000)}`
    const message = httpErrorMessage(422, 'VALIDATION_ERROR', long)
    expect(message).toContain('The service said: limit must be at most 500 x')
    expect(message.length).toBeLessThan(450)
    expect(httpErrorMessage(401, 'UNAUTHORIZED', 'Invalid token')).not.toContain('Invalid token')
  })
})

describe('ServiceError', () => {
  const error = new ServiceError(
    'The service rejected the API key (UNAUTHORIZED). Check the key of this profile.',
    {
      status: 401,
      code: 'UNAUTHORIZED',
      serviceMessage: 'Invalid token',
      errors: null,
      requestId: 'req-1',
      method: 'GET',
      path: '/v1/runs',
      attempts: 1,
      outcomeUnknown: false,
    },
    { cause: new Error('inner') },
  )

  it('is an Error named ServiceError', () => {
    expect(error).toBeInstanceOf(Error)
    expect(isServiceError(error)).toBe(true)
    expect(isServiceError(new Error('x'))).toBe(false)
    expect(String(error)).toBe(
      'ServiceError: The service rejected the API key (UNAUTHORIZED). Check the key of this profile.',
    )
  })

  it('serializes its fields and message, without the cause', () => {
    const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>
    expect(json).toMatchObject({
      name: 'ServiceError',
      message: error.message,
      status: 401,
      code: 'UNAUTHORIZED',
      requestId: 'req-1',
      path: '/v1/runs',
    })
    expect(json).not.toHaveProperty('cause')
    expect(json).not.toHaveProperty('stack')
  })
})

describe('formatDuration', () => {
  it('uses ms below a second and seconds above', () => {
    expect(formatDuration(200)).toBe('200 ms')
    expect(formatDuration(30_000)).toBe('30 s')
    expect(formatDuration(1500)).toBe('1.5 s')
  })
})
