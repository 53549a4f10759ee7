import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embedProvenance, readProvenance } from '../../src-main/provenance'
import { startSandbox, type RunningSandbox } from '../../src-main/sandbox'
import { runAtelier } from '../helpers/cli'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'

/**
 * `atelier run FLOW --out DIR` writes each output with its record inside, and `atelier run
 * picture.png` runs the flow that made it again: unchanged, from the cache, nothing dispatched
 * and nothing paid, the same picture.
 */

const keychain = secretServiceAvailability()

interface RunJson {
  flowRunId: string
  state: string
  totals: { dispatched: number; cached: number; costMicro: number }
  outputs: Record<string, { sha256: string }>
  files?: {
    path: string
    output: string
    index: number
    sha256: string
    mediaType: string
    recorded: boolean
  }[]
}

describe.skipIf(!keychain.available)('atelier run --out and atelier run picture.png', () => {
  let keyring: Awaited<ReturnType<typeof startSecretService>>
  let sandbox: RunningSandbox
  let scratch: string
  let cli: (args: string[], input?: string) => ReturnType<typeof runAtelier>
  let flowFile: string
  let written: string

  /** Every run the service holds: what was dispatched, counted where it lands. */
  async function runCount(): Promise<number> {
    let count = 0
    let cursor: string | null = null
    do {
      const query: string = cursor ? `&after=${encodeURIComponent(cursor)}` : ''
      const page = (await (
        await fetch(`${sandbox.url}/v1/runs?limit=200${query}`, {
          headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
        })
      ).json()) as { items: unknown[]; next: string | null }
      count += page.items.length
      cursor = page.next
    } while (cursor)
    return count
  }

  beforeAll(async () => {
    keyring = await startSecretService()
    scratch = mkdtempSync(join(tmpdir(), 'atelier-provenance-cli-'))
    sandbox = await startSandbox({ latencyMs: 5 })
    const home = join(scratch, 'home')
    cli = (args, input = '') =>
      runAtelier(['--home', home, ...args], { env: keyring.env, input, timeoutMs: 120_000 })
    const added = await cli(
      ['profile', 'add', 'work', '--base-url', sandbox.url],
      sandbox.keys.admin,
    )
    expect(added.code).toBe(0)
    const page = (await (
      await fetch(
        `${sandbox.url}/v1/models?q=${encodeURIComponent('slug=atelier/text-to-image')}`,
        {
          headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
        },
      )
    ).json()) as { items: { id: string }[] }
    const nodeId = randomUUID()
    flowFile = join(scratch, 'harbour.json')
    // The seed is on the dice: the same picture again needs the seed the record keeps.
    writeFileSync(
      flowFile,
      JSON.stringify({
        id: randomUUID(),
        name: 'Harbour at dusk',
        inputs: [{ id: randomUUID(), name: 'subject', variable_type_code: 'text' }],
        nodes: [
          {
            id: nodeId,
            label: 'Draw',
            type_code: 'model',
            model_id: page.items[0]?.id,
            config: { flow_inputs: { prompt: 'subject' }, flow_outputs: { image: 'picture' } },
            inputs: [
              { id: randomUUID(), name: 'prompt', variable_type_code: 'text' },
              { id: randomUUID(), name: 'width', variable_type_code: 'integer', value: 64 },
              { id: randomUUID(), name: 'height', variable_type_code: 'integer', value: 64 },
              { id: randomUUID(), name: 'seed', variable_type_code: 'seed' },
            ],
            outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
          },
        ],
        outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
      }),
    )
  }, 120_000)

  afterAll(async () => {
    await sandbox.close()
    await keyring.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('writes each output as <flow-slug>-<output>-<n>.<ext> with its record inside', async () => {
    const out = join(scratch, 'out')
    const ran = await cli(['run', flowFile, '--input', 'subject=a navy harbour', '--out', out])
    expect(ran.stderr).toBe('')
    expect(ran.code).toBe(0)
    written = join(out, 'harbour-at-dusk-picture-1.png')
    expect(readdirSync(out)).toEqual(['harbour-at-dusk-picture-1.png'])
    expect(ran.stdout).toContain('Wrote 1 file:')
    expect(ran.stdout).toContain(written)
    const reading = readProvenance(readFileSync(written))
    expect(reading.state).toBe('intact')
    if (reading.state !== 'intact') return
    expect(reading.record.flow_inputs).toEqual({ subject: 'a navy harbour' })
    expect(reading.record.output.name).toBe('image')
    expect(reading.record.seed).toEqual(expect.any(Number))
    // Still a picture any viewer opens.
    expect((await sharp(written).metadata()).width).toBe(64)

    // A name already taken is never overwritten.
    const again = await cli([
      '--json',
      'run',
      flowFile,
      '--input',
      'subject=a navy harbour',
      '--out',
      out,
    ])
    expect(again.code).toBe(0)
    const summary = JSON.parse(again.stdout) as RunJson
    expect(summary.files).toEqual([
      {
        path: join(out, 'harbour-at-dusk-picture-1-2.png'),
        output: 'picture',
        index: 0,
        sha256: reading.record.output.sha256,
        mediaType: 'image/png',
        recorded: true,
      },
    ])
    expect(readdirSync(out).sort()).toEqual([
      'harbour-at-dusk-picture-1-2.png',
      'harbour-at-dusk-picture-1.png',
    ])
  }, 240_000)

  it('runs the flow that made a picture again: nothing dispatched, nothing paid, the same picture', async () => {
    const first = readProvenance(readFileSync(written))
    if (first.state !== 'intact') throw new Error('the written picture lost its record')
    const before = await runCount()
    const ran = await cli(['--json', 'run', written, '--out', join(scratch, 'again')])
    expect(ran.stderr).toBe('')
    expect(ran.code).toBe(0)
    const summary = JSON.parse(ran.stdout) as RunJson
    expect(summary.state).toBe('succeeded')
    expect(summary.totals.dispatched).toBe(0)
    expect(summary.totals.costMicro).toBe(0)
    expect(summary.outputs.picture?.sha256).toBe(first.record.output.sha256)
    expect(await runCount()).toBe(before)
    const rewritten = readProvenance(readFileSync(summary.files?.[0]?.path ?? ''))
    expect(rewritten.state === 'intact' && rewritten.record.seeds).toEqual(first.record.seeds)
  }, 240_000)

  it('warns about a picture changed since it was made, and still runs its flow', async () => {
    const first = readProvenance(readFileSync(written))
    if (first.state !== 'intact') throw new Error('the written picture lost its record')
    const edited = await sharp(readFileSync(written)).negate().png().toBuffer()
    const changed = join(scratch, 'edited.png')
    writeFileSync(changed, embedProvenance(edited, first.record))
    const ran = await cli(['run', changed])
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain('warning: This picture was changed after Atelier made it')
    expect(ran.stdout).toMatch(/succeeded: 0 dispatched, 1 cached/)
  }, 240_000)

  it('exits 1 with the reading’s words for a picture with no record or a damaged one', async () => {
    const plain = join(scratch, 'plain.png')
    writeFileSync(
      plain,
      await sharp({
        create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } },
      })
        .png()
        .toBuffer(),
    )
    const none = await cli(['run', plain])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('This file carries no Atelier record.')

    const bytes = Buffer.from(readFileSync(written))
    const at = bytes.indexOf('"flow_inputs"')
    expect(at).toBeGreaterThan(0)
    bytes.write('"flow_INPUTS"', at)
    const tampered = join(scratch, 'tampered.png')
    writeFileSync(tampered, bytes)
    const damaged = await cli(['--json', 'run', tampered])
    expect(damaged.code).toBe(1)
    expect(JSON.parse(damaged.stdout)).toMatchObject({
      error: { code: 'PICTURE_RECORD_DAMAGED' },
    })
  }, 240_000)
})
