import { describe, expect, it } from 'vitest'
import { createServiceClient, newIdempotencyKey } from '../../src-main/service'

const KEY = 'sk-live-SENTINEL-4f1d2a9b7c3e'

describe('createServiceClient options', () => {
  it.each([
    ['not a URL', { baseUrl: 'nope' }],
    ['another protocol', { baseUrl: 'ftp://example.com' }],
    ['credentials in the URL', { baseUrl: 'https://user:pass@example.com' }],
    ['too many attempts', { retry: { maxAttempts: 6 } }],
    ['no timeout', { timeoutMs: 0 }],
  ])('refuses %s', (_what, overrides) => {
    expect(() =>
      createServiceClient({ baseUrl: 'https://example.com', apiKey: KEY, ...overrides }),
    ).toThrow()
  })

  it.each(['', 'has space', 'line\nbreak', `${KEY}\r\nX-Evil: 1`])(
    'refuses a malformed key without echoing it',
    (apiKey) => {
      let message = ''
      try {
        createServiceClient({ baseUrl: 'https://example.com', apiKey })
      } catch (error) {
        message = String(error)
      }
      expect(message).toContain('apiKey')
      if (apiKey !== '') expect(message).not.toContain(apiKey)
    },
  )
})

describe('newIdempotencyKey', () => {
  it('gives a fresh UUID each time', () => {
    const a = newIdempotencyKey()
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(newIdempotencyKey()).not.toBe(a)
  })
})
