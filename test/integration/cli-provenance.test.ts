import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src-main/cli/program'
import { openDatabases } from '../../src-main/db'
import { embedProvenance } from '../../src-main/provenance'
import type { ProvenanceRecord } from '../../src-shared/domain/provenance'
import { runAtelier } from '../helpers/cli'
import { makeRun } from '../helpers/mirror-runs'
import {
  makeGif,
  makePng,
  makeLossyWebp,
  recordFor,
  sha256Of,
} from '../helpers/provenance-pictures'

let dir: string
let home: string
let record: ProvenanceRecord
const files: Record<string, string> = {}

async function atelier(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(['--home', home, ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  })
  return { code, stdout, stderr }
}

function save(name: string, bytes: Uint8Array): string {
  const path = join(dir, name)
  writeFileSync(path, bytes)
  files[name] = path
  return path
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'atelier-provenance-cli-'))
  home = join(dir, 'home')
  const png = await makePng()
  record = recordFor(png, 'image/png')
  const withRecord = embedProvenance(png, record)
  save('harbour.png', withRecord)
  save('plain.png', png)
  save('animation.gif', await makeGif())
  const webp = await makeLossyWebp()
  // the same record in a picture it was not made for: its bytes differ from output.sha256
  save('edited.webp', embedProvenance(webp, record))
  const damaged = Buffer.from(withRecord)
  const at = damaged.indexOf('"format":')
  damaged[at + 8] = ';'.charCodeAt(0)
  save('damaged.png', damaged)
  save('newer.png', embedProvenance(png, { ...record, version: 2 } as unknown as ProvenanceRecord))
  save('broken.png', png.subarray(0, 40))
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('atelier provenance FILE', () => {
  it('prints a short summary of an intact record', async () => {
    const result = await atelier('provenance', files['harbour.png'] ?? '')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(
      [
        'Flow:       Moonlit <harbour> & "friends" (version 3)',
        'Node:       Paint the harbour (paint)',
        'Model:      sandbox/paint, version 2024-06',
        'Seed:       1234',
        'Cost:       0.0420 credits',
        'Run:        0b7f3c1e-2a5d-4c8e-9f10-123456789abc',
        'Created:    2026-11-28T03:00:00.000Z',
        'Evaluation: passed, score 0.91',
        'Output:     image (image/png)',
        'State:      intact',
        '',
      ].join('\n'),
    )
  })

  it('prints {state, record} with --json, after the file name too', async () => {
    const result = await atelier('provenance', files['harbour.png'] ?? '', '--json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ state: 'intact', record })
  })

  it('shows the record of an edited picture, saying it changed', async () => {
    const human = await atelier('provenance', files['edited.webp'] ?? '')
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('State:      changed since it was made\n')
    expect(human.stdout).toContain('This picture was changed after Atelier made it;')
    const json = await atelier('--json', 'provenance', files['edited.webp'] ?? '')
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'changed', record })
  })

  it('says a damaged or foreign record plainly, and exits 1', async () => {
    const damaged = await atelier('provenance', files['damaged.png'] ?? '')
    expect(damaged.code).toBe(1)
    expect(damaged.stdout).toBe('')
    expect(damaged.stderr).toMatch(/^atelier: This file's Atelier record is damaged \(.+\)/)

    const newer = await atelier('provenance', files['newer.png'] ?? '', '--json')
    expect(newer.code).toBe(1)
    expect(JSON.parse(newer.stdout)).toEqual({
      state: 'foreign',
      message:
        "This file's record was written by a newer Atelier (record version 2; this one reads version 1). Update Atelier to read it.",
    })
  })

  it('says a picture without a record carries none', async () => {
    for (const name of ['plain.png', 'animation.gif']) {
      const result = await atelier('provenance', files[name] ?? '', '--json')
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout)).toMatchObject({ state: 'none' })
    }
    const human = await atelier('provenance', files['plain.png'] ?? '')
    expect(human.stdout).toBe('This file carries no Atelier record.\n')
  })

  it('exits 2 for a path it cannot read, or a picture too broken to read', async () => {
    const missing = await atelier('provenance', join(dir, 'nowhere.png'))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('Cannot read')
    const json = await atelier('provenance', join(dir, 'nowhere.png'), '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'FILE_UNREADABLE' } })
    const broken = await atelier('provenance', files['broken.png'] ?? '')
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain('cut short')
  })

  it('runs the same way through the real binary', async () => {
    const result = await runAtelier(['--home', home, 'provenance', files['damaged.png'] ?? ''], {
      timeoutMs: 120_000,
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("This file's Atelier record is damaged")
  }, 130_000)
})

describe('atelier provenance RUN_ID', () => {
  it('prints the record of a run this machine knows, and exits 1 for an unknown id', async () => {
    const picture = await makePng()
    const run = makeRun(0, { orgId: 'org-1', newestMs: Date.parse('2026-11-28T03:00:00Z') })
    run.output = {
      image: {
        url: 'https://example.invalid/0.png',
        sha256: sha256Of(picture),
        content_type: 'image/png',
      },
    }
    const dbs = openDatabases(home)
    try {
      dbs.mirror.runs.upsertPage([run])
    } finally {
      dbs.close()
    }
    const found = await atelier('provenance', run.id, '--json')
    expect(found.code).toBe(0)
    const shown = JSON.parse(found.stdout) as { state: string; record: ProvenanceRecord }
    expect(shown.state).toBe('intact')
    expect(shown.record).toMatchObject({
      run_id: run.id,
      cost: run.cost,
      output: { name: 'image', index: 0, sha256: sha256Of(picture), media_type: 'image/png' },
    })
    const human = await atelier('provenance', run.id)
    expect(human.stdout).toContain(`Run:        ${run.id}\n`)

    const unknown = await atelier('provenance', '0a000000-0000-7000-8000-00000000ffff')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('is known on this machine; run `atelier sync`')
  })
})
