import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run, Workflow } from '../../src-shared/api'
import { openDatabases } from '../../src-main/db'
import { BuiltinRunner } from '../../src-main/executor'
import { Palette } from '../../src-main/flows/palette'
import { openLogger } from '../../src-main/log'
import { MediaStore } from '../../src-main/media-store'
import { encodePngChunk } from '../../src-main/provenance/png'
import { startSandbox, type RunningSandbox } from '../../src-main/sandbox'
import { createServiceClient } from '../../src-main/service'
import { runAtelier } from '../helpers/cli'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'comfyui')
const keychain = secretServiceAvailability()

interface ImportJson {
  id: string
  slug: string
  name: string
  inputs: { name: string; default_value: unknown; wfengine_node_id: string }[]
  outputs: { name: string; variable_type_code: string }[]
  notExposed: { nodeId: string; classType: string }[]
}

/** A PNG as ComfyUI saves it: its graph in `prompt` and `workflow` tEXt chunks. */
async function comfyPng(texts: Record<string, string>): Promise<Buffer> {
  const png = await sharp({
    create: { width: 8, height: 8, channels: 3, background: { r: 40, g: 60, b: 200 } },
  })
    .png()
    .toBuffer()
  const iend = png.length - 12
  const chunks = Object.entries(texts).map((entry) =>
    Buffer.from(encodePngChunk('tEXt', new Uint8Array(Buffer.from(entry.join('\0'), 'latin1')))),
  )
  return Buffer.concat([png.subarray(0, iend), ...chunks, png.subarray(iend)])
}

describe.skipIf(!keychain.available)(
  'atelier workflow import, then run',
  { timeout: 240_000 },
  () => {
    let keyring: Awaited<ReturnType<typeof startSecretService>>
    let sandbox: RunningSandbox
    let scratch: string
    let home: string
    const cli = (args: string[], input = '') =>
      runAtelier(['--home', home, ...args], {
        env: { ...keyring.env, ATELIER_FROM_SOURCES: '1' },
        input,
        timeoutMs: 120_000,
      })
    const service = () =>
      createServiceClient({
        baseUrl: sandbox.url,
        apiKey: sandbox.keys.admin,
        organizationId: sandbox.orgId,
        retry: { maxAttempts: 1 },
      })

    beforeAll(async () => {
      keyring = await startSecretService()
      scratch = mkdtempSync(join(tmpdir(), 'atelier-workflow-cli-'))
      home = join(scratch, 'home')
      sandbox = await startSandbox({ latencyMs: 5, checkResponses: true })
      const added = await cli(
        ['profile', 'add', 'work', '--base-url', sandbox.url],
        sandbox.keys.admin,
      )
      expect(added.code).toBe(0)
    }, 60_000)

    afterAll(async () => {
      await sandbox.close()
      await keyring.close()
      rmSync(scratch, { recursive: true, force: true })
    })

    it('imports a text-to-image workflow, offers it in the palette, and runs it with a new prompt', async () => {
      const imported = await cli([
        '--json',
        'workflow',
        'import',
        join(FIXTURES, 'txt2img-editor.json'),
        '--name',
        'Galaxy bottle',
      ])
      expect(imported.stderr).toBe('')
      expect(imported.code).toBe(0)
      const made = JSON.parse(imported.stdout) as ImportJson
      expect(made.name).toBe('Galaxy bottle')
      expect(made.inputs.map((input) => input.name)).toEqual([
        'prompt',
        'negative_prompt',
        'seed',
        'steps',
        'cfg',
        'sampler',
        'scheduler',
        'width',
        'height',
        'batch_size',
      ])
      expect(made.inputs.find((input) => input.name === 'height')?.default_value).toBe(768)
      expect(made.outputs).toMatchObject([{ name: 'image', variable_type_code: 'image' }])
      expect(made.notExposed).toEqual([])

      // The service holds the API form to run, and the editor form as the person drew it.
      const stored: Workflow = await service().get('/v1/comfyui-workflows/{comfyui_workflow_id}', {
        params: { path: { comfyui_workflow_id: made.id } },
      })
      expect(stored.workflow_json).toEqual(
        JSON.parse(readFileSync(join(FIXTURES, 'txt2img-api.json'), 'utf8')),
      )
      expect(stored.graph).toEqual(
        JSON.parse(readFileSync(join(FIXTURES, 'txt2img-editor.json'), 'utf8')),
      )

      // In the palette at once, without a sync: the import wrote it into the mirror.
      const dbs = openDatabases(home)
      const media = new MediaStore({ dir: join(scratch, 'media'), maxBytes: 64 * 1024 * 1024 })
      const logger = openLogger({ home, level: 'error' })
      try {
        const palette = new Palette({
          mirror: dbs.mirror,
          client: service(),
          orgId: sandbox.orgId,
          logger,
          builtinRunner: () => new BuiltinRunner({ media, service: service() }),
          localFlows: () => [],
          signal: new AbortController().signal,
        })
        const item = (await palette.items()).find((entry) => entry.target === made.id)
        expect(item).toMatchObject({
          kind: 'wfengine_workflow',
          name: 'Galaxy bottle',
          category: 'Workflows',
        })
        expect(item?.inputs.find((port) => port.name === 'prompt')).toMatchObject({
          displayName: 'Prompt',
          variableType: 'text',
        })
      } finally {
        await media.close()
        dbs.close()
        logger.close()
      }

      const ran = await cli(['--json', 'run', made.slug, '--input', 'prompt=a red fox'])
      expect(ran.stderr).toBe('')
      expect(ran.code).toBe(0)
      const result = JSON.parse(ran.stdout) as {
        state: string
        outputs: Record<string, { kind: string; content_type: string; run_id?: string }>
        totals: { dispatched: number }
      }
      expect(result.state).toBe('succeeded')
      expect(result.totals.dispatched).toBe(1)
      expect(result.outputs.image).toMatchObject({ kind: 'media' })
      expect(result.outputs.image?.content_type).toMatch(/^image\//)
      // The service's run took the new prompt, and the workflow's own values for the rest.
      const run: Run = await service().get('/v1/runs/{run_id}', {
        params: { path: { run_id: result.outputs.image?.run_id ?? '' } },
      })
      expect(run.wfengine_workflow_id).toBe(made.id)
      expect(run.input).toMatchObject({ prompt: 'a red fox', width: 512, height: 768 })
    })

    it('imports a PNG ComfyUI saved, telling people what it offers and which custom nodes it left', async () => {
      const file = join(scratch, 'ComfyUI_00007_.png')
      writeFileSync(
        file,
        await comfyPng({ prompt: readFileSync(join(FIXTURES, 'custom-node-api.json'), 'utf8') }),
      )
      const imported = await cli(['workflow', 'import', file])
      expect(imported.stderr).toBe('')
      expect(imported.code).toBe(0)
      expect(imported.stdout).toContain(
        'Imported "ComfyUI 00007": 10 inputs, 2 outputs; 1 custom node not exposed.',
      )
      expect(imported.stdout).toMatch(/prompt \(Prompt, text\) default "a lighthouse on a cliff/)
      expect(imported.stdout).toContain('batch_size (Batch size, integer) default 2')
      expect(imported.stdout).toContain('image_2 (Image (node 12), image)')
      expect(imported.stdout).toContain('node 10: MyCustomUpscaler')
      expect(imported.stdout).toMatch(/Run it: atelier run comfyui-00007 --input prompt=/)
    })

    it('exits 2 for a file that is not a workflow, and for a picture without one', async () => {
      const notes = join(scratch, 'notes.txt')
      writeFileSync(notes, 'shopping: eggs, flour')
      const text = await cli(['workflow', 'import', notes])
      expect(text.code).toBe(2)
      expect(text.stderr).toContain('notes.txt is not a ComfyUI workflow')
      expect(text.stderr).toContain("a JSON file saved with 'Save (API)' or 'Save'")

      const plain = join(scratch, 'holiday.png')
      writeFileSync(plain, await comfyPng({ Software: 'a camera' }))
      const picture = await cli(['--json', 'workflow', 'import', plain])
      expect(picture.code).toBe(2)
      expect(JSON.parse(picture.stdout)).toMatchObject({
        error: { code: 'NO_WORKFLOW_IN_PICTURE' },
      })
      expect(picture.stderr).toContain('This picture carries no workflow')

      const unknown = await cli(['run', 'no-such-workflow'])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain('neither a flow file nor a flow or workflow')
    })
  },
)
