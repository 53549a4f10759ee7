import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseBaseUrl, readProfiles, type Profile } from '../../src-main/secrets'
import { writeProfiles } from '../../src-main/secrets/profiles-file'

/**
 * Every path the client calls starts with /v1, so a base URL copied from API docs with /v1 at
 * its end is saved without it (it would otherwise reach /v1/v1/… and be told NOT_FOUND).
 */

const scratch = mkdtempSync(join(tmpdir(), 'atelier-base-url-'))

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

describe('a base URL ending in /v1', () => {
  it('is saved without it, with or without a trailing slash, under any prefix', () => {
    expect(parseBaseUrl('https://api.example.com/v1')).toBe('https://api.example.com')
    expect(parseBaseUrl('https://api.example.com/v1/')).toBe('https://api.example.com')
    expect(parseBaseUrl('https://api.example.com/V1//')).toBe('https://api.example.com')
    expect(parseBaseUrl('http://127.0.0.1:8787/v1')).toBe('http://127.0.0.1:8787')
    expect(parseBaseUrl('https://example.com/atelier/v1/')).toBe('https://example.com/atelier')
  })

  it('keeps paths that only look like it', () => {
    expect(parseBaseUrl('https://api.example.com/v10')).toBe('https://api.example.com/v10')
    expect(parseBaseUrl('https://api.example.com/v1/prefix')).toBe(
      'https://api.example.com/v1/prefix',
    )
    expect(parseBaseUrl('https://api.example.com/apiv1')).toBe('https://api.example.com/apiv1')
  })

  it('reads a profile saved earlier with /v1 in today’s form, not as a damaged file', async () => {
    const home = mkdtempSync(join(scratch, 'home-'))
    const saved: Profile = {
      name: 'work',
      base_url: 'https://api.example.com/v1',
      organization_id: null,
      created_at: '2026-11-21T10:00:00.000Z',
    }
    await writeProfiles(home, { current: 'work', profiles: [saved] })
    const read = await readProfiles(home)
    expect(read.profiles).toEqual([{ ...saved, base_url: 'https://api.example.com' }])
  })
})
