import { describe, expect, it } from 'vitest'
import {
  errorText,
  explainError,
  explainSyncFailure,
} from '../../src-renderer/src/shell/errorWords'
import { summary } from './shell-transport'

describe('errors in plain words', () => {
  it('says a refused key is not valid and leads to Settings, whatever the service said', () => {
    for (const code of ['UNAUTHORIZED', 'KEY_REJECTED', 'HTTP_401']) {
      const plain = explainError({
        code,
        message: 'The service rejected the API key (UNAUTHORIZED). Check the key of this profile.',
      })
      expect(plain.title).toBe('The API key is not valid')
      expect(plain.text).toBe('The API key is not valid. Add it again in Settings.')
      expect(plain.detail).toBe('Add it again in Settings.')
      expect(plain.fix).toBe('settings')
    }
  })

  it('says when there is not enough credit, and what to do about it', () => {
    const plain = explainError({ code: 'INSUFFICIENT_CREDIT', message: 'HTTP 402' })
    expect(plain.title).toBe('Not enough credit')
    expect(plain.text).toContain('Add credit to the organization')
    expect(plain.fix).toBeNull()
  })

  it('says the service cannot be reached, that synced things stay, and offers to retry', () => {
    for (const code of ['NETWORK_ERROR', 'TIMEOUT', 'OFFLINE', 'SERVICE_UNREACHABLE']) {
      for (const context of ['action', 'background'] as const) {
        const plain = explainError(
          { code, message: 'fetch failed: ECONNREFUSED 127.0.0.1:9' },
          context,
        )
        expect(plain.title).toBe('The service cannot be reached')
        expect(plain.text).not.toContain('ECONNREFUSED')
        expect(plain.text).toContain('What was synced stays available')
        expect(plain.fix).toBe('retry')
      }
    }
  })

  it('asks the person to try again when their own action could not reach the service', () => {
    // Creating a webhook or a callback secret is not sent again by anything: the words must not
    // promise that Atelier retries it.
    const offline = {
      code: 'OFFLINE',
      message: 'The service cannot be reached, so the callback secret was not created.',
    }
    const plain = explainError(offline)
    expect(plain.text).toBe(
      'The service cannot be reached. Check the internet connection, then try again. What was synced stays available.',
    )
    expect(plain.detail).toBe(
      'Check the internet connection, then try again. What was synced stays available.',
    )
    expect(plain.text).not.toMatch(/by itself/)
    expect(errorText(offline)).toBe(plain.text)
    expect(explainError(offline, 'action')).toEqual(plain)
  })

  it('says Atelier tries again by itself only for its own background work', () => {
    const offline = { code: 'NETWORK_ERROR', message: 'fetch failed' }
    expect(errorText(offline, 'background')).toBe(
      'The service cannot be reached. Check the internet connection. What was synced stays available, and Atelier tries again by itself.',
    )
    // A sync that went offline is such work: it runs again on its own, sooner while offline.
    expect(
      explainSyncFailure(summary({ outcome: 'offline', code: 'OFFLINE', message: 'fetch failed' }))
        ?.detail,
    ).toBe(
      'Check the internet connection. What was synced stays available, and Atelier tries again by itself.',
    )
    // Words without a background variant read the same either way.
    const busy = { code: 'RATE_LIMITED', message: 'HTTP 429' }
    expect(explainError(busy, 'background')).toEqual(explainError(busy))
  })

  it('lists validation problems field by field, and keeps them for a list', () => {
    const issues = [
      { path: 'name', message: 'must not be empty' },
      { path: 'width', message: 'must be 64 or more' },
    ]
    const plain = explainError({
      code: 'INVALID_ARGUMENT',
      message: 'The arguments of flows.rename are not valid: must not be empty',
      issues,
    })
    expect(plain.text).toBe(
      'Some values are not valid: name: must not be empty; width: must be 64 or more. Correct them, then try again.',
    )
    expect(plain.issues).toEqual(issues)
  })

  it("keeps Atelier's own messages word for word, under a title for the toast", () => {
    const flowInvalid = {
      code: 'FLOW_INVALID',
      message: 'The flow file has 1 problem; fix it and import it again.',
      issues: [{ path: 'nodes.0.label', message: 'nodes.0.label is required; add it.' }],
    }
    expect(errorText(flowInvalid)).toBe(flowInvalid.message)
    expect(explainError(flowInvalid)).toMatchObject({
      title: 'The flow has problems',
      detail: flowInvalid.message,
      issues: flowInvalid.issues,
    })
    const refused = {
      code: 'RUN_REFUSED',
      message: 'The estimate is more than the balance; top up.',
    }
    expect(errorText(refused)).toBe(refused.message)
    const opening = {
      code: 'UNAVAILABLE',
      message: 'Atelier is still opening its local data. Try again in a moment.',
    }
    expect(errorText(opening)).toBe(opening.message)
  })

  it('gives an unknown code its message, and an empty message a sentence', () => {
    expect(
      errorText({ code: 'LEDGER_DAMAGED', message: 'The ledger is damaged; restore it.' }),
    ).toBe('The ledger is damaged; restore it.')
    expect(errorText({ code: 'SOMETHING_NEW', message: '' })).toBe('That did not work.')
  })

  it('explains a failed sync by its code, or by its outcome when it has none', () => {
    expect(explainSyncFailure(summary())).toBeNull()
    expect(explainSyncFailure(summary({ outcome: 'aborted' }))).toBeNull()
    expect(
      explainSyncFailure(summary({ outcome: 'offline', code: null, message: 'fetch failed' })),
    ).toMatchObject({ title: 'The service cannot be reached', fix: 'retry' })
    expect(
      explainSyncFailure(
        summary({ outcome: 'unauthorized', code: 'PERMISSION_DENIED', message: 'refused' }),
      ),
    ).toMatchObject({ title: 'The API key may not do this', fix: 'settings' })
    expect(
      explainSyncFailure(summary({ outcome: 'failed', code: 'HTTP_500', message: 'It broke.' })),
    ).toMatchObject({ title: 'The sync stopped', text: 'It broke.' })
  })
})
