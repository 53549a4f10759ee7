import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { encodePngChunk } from '../../src-main/provenance/png'
import {
  exposeComfyWorkflow,
  importSummary,
  looksLikeComfyWorkflow,
  nameFromFileName,
  parseComfyFile,
  WHAT_A_WORKFLOW_IS,
  WorkflowImportError,
  type ComfyApiWorkflow,
  type ImportedWorkflow,
} from '../../src-main/workflows'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'comfyui')
const bytesOf = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)))
const jsonOf = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'))
const txt2img = jsonOf('txt2img-api.json') as ComfyApiWorkflow

/** A plain PNG, as any program would write it. */
const plainPng = async () =>
  new Uint8Array(
    await sharp({
      create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 90, b: 30 } },
    })
      .png()
      .toBuffer(),
  )

/** A PNG as ComfyUI saves it: `prompt` and `workflow` tEXt chunks before the end. */
async function comfyPng(texts: Record<string, string>): Promise<Uint8Array> {
  const png = await plainPng()
  const iend = png.length - 12
  const chunks = Object.entries(texts).map(([key, text]) =>
    encodePngChunk('tEXt', new Uint8Array(Buffer.from(`${key}\0${text}`, 'latin1'))),
  )
  return new Uint8Array(
    Buffer.concat([
      png.subarray(0, iend),
      ...chunks.map((c) => Buffer.from(c)),
      png.subarray(iend),
    ]),
  )
}

const refused = (run: () => unknown): WorkflowImportError => {
  try {
    run()
  } catch (error) {
    if (error instanceof WorkflowImportError) return error
    throw error
  }
  throw new Error('expected a WorkflowImportError')
}

describe('which inputs and outputs a ComfyUI workflow offers', () => {
  it('offers the prompts, sampler settings and size of a text-to-image graph, with its own values', () => {
    const exposed = exposeComfyWorkflow(txt2img)
    expect(
      exposed.inputs.map((input) => [
        input.name,
        input.display_name,
        input.variable_type_code,
        input.wfengine_node_id,
        input.wfengine_field_name,
        input.default_value,
      ]),
    ).toEqual([
      ['prompt', 'Prompt', 'text', '6', 'text', txt2img['6']?.inputs.text],
      ['negative_prompt', 'Negative prompt', 'text', '7', 'text', 'text, watermark, blurry'],
      ['seed', 'Seed', 'seed', '3', 'seed', 156680208700286],
      ['steps', 'Steps', 'integer', '3', 'steps', 20],
      ['cfg', 'Guidance (CFG)', 'number', '3', 'cfg', 8],
      ['sampler', 'Sampler', 'enum', '3', 'sampler_name', 'euler'],
      ['scheduler', 'Scheduler', 'enum', '3', 'scheduler', 'normal'],
      ['width', 'Width', 'integer', '5', 'width', 512],
      ['height', 'Height', 'integer', '5', 'height', 768],
      ['batch_size', 'Batch size', 'integer', '5', 'batch_size', 1],
    ])
    // Every default is the value the graph holds in the field the input names.
    for (const input of exposed.inputs) {
      const node = txt2img[input.wfengine_node_id ?? '']
      expect(input.default_value).toEqual(node?.inputs[input.wfengine_field_name ?? ''])
    }
    expect(exposed.inputs.map((input) => input.sort_order)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const sampler = exposed.inputs.find((input) => input.name === 'sampler')
    expect(sampler).toMatchObject({ validator_code: 'enum' })
    expect((sampler?.validator_attrs?.values as string[]).includes('euler')).toBe(true)
    expect(exposed.outputs).toEqual([
      {
        name: 'image',
        display_name: 'Image',
        variable_type_code: 'image',
        sort_order: 0,
        wfengine_node_id: '9',
        wfengine_field_name: 'images',
      },
    ])
    expect(exposed.notExposed).toEqual([])
  })

  it('offers an image loader as a required image input, without the other machine’s file name as default', () => {
    const workflow = jsonOf('img2img-api.json') as ComfyApiWorkflow
    const { inputs, outputs } = exposeComfyWorkflow(workflow)
    const image = inputs.find((input) => input.name === 'image')
    expect(image).toEqual({
      name: 'image',
      display_name: 'Image',
      variable_type_code: 'image',
      is_required: true,
      default_behavior_code: 'require',
      description: 'In the workflow: example.png',
      sort_order: inputs.length - 1,
      wfengine_node_id: '1',
      wfengine_field_name: 'image',
    })
    // No empty latent: no size to offer; the sampler's settings are the graph's.
    expect(inputs.map((input) => input.name)).toEqual([
      'prompt',
      'negative_prompt',
      'seed',
      'steps',
      'cfg',
      'sampler',
      'scheduler',
      'image',
    ])
    expect(inputs.find((input) => input.name === 'cfg')?.default_value).toBe(6.5)
    expect(inputs.find((input) => input.name === 'scheduler')?.default_value).toBe('karras')
    expect(outputs.map((output) => output.wfengine_node_id)).toEqual(['8'])
  })

  it('keeps an unknown custom node untouched and lists it as not exposed', () => {
    const workflow = jsonOf('custom-node-api.json') as ComfyApiWorkflow
    const before = JSON.stringify(workflow)
    const { inputs, outputs, notExposed } = exposeComfyWorkflow(workflow)
    expect(JSON.stringify(workflow)).toBe(before)
    expect(notExposed).toEqual([{ nodeId: '10', classType: 'MyCustomUpscaler' }])
    expect(inputs.some((input) => input.wfengine_node_id === '10')).toBe(false)
    expect(inputs.find((input) => input.name === 'batch_size')?.default_value).toBe(2)
    expect(
      outputs.map((output) => [output.name, output.display_name, output.wfengine_node_id]),
    ).toEqual([
      ['image', 'Image', '11'],
      ['image_2', 'Image (node 12)', '12'],
    ])
  })

  it('numbers the inputs of a second sampler, naming its node', () => {
    const workflow: ComfyApiWorkflow = {
      ...txt2img,
      '12': { class_type: 'CLIPTextEncode', inputs: { text: 'a second idea', clip: ['4', 1] } },
      '13': {
        class_type: 'KSamplerAdvanced',
        inputs: {
          add_noise: 'enable',
          noise_seed: 99,
          steps: 10,
          cfg: 4,
          sampler_name: 'my_own_sampler',
          scheduler: 'karras',
          start_at_step: 0,
          end_at_step: 10,
          return_with_leftover_noise: 'disable',
          model: ['4', 0],
          // The same negative encoder as the first sampler: offered once.
          positive: ['12', 0],
          negative: ['7', 0],
          latent_image: ['3', 0],
        },
      },
    }
    const { inputs } = exposeComfyWorkflow(workflow)
    const second = inputs.filter(
      (input) => input.wfengine_node_id === '13' || input.wfengine_node_id === '12',
    )
    expect(second.map((input) => [input.name, input.display_name, input.default_value])).toEqual([
      ['prompt_2', 'Prompt (node 12)', 'a second idea'],
      ['seed_2', 'Seed (node 13)', 99],
      ['steps_2', 'Steps (node 13)', 10],
      ['cfg_2', 'Guidance (CFG) (node 13)', 4],
      ['sampler_2', 'Sampler (node 13)', 'my_own_sampler'],
      ['scheduler_2', 'Scheduler (node 13)', 'karras'],
    ])
    expect(inputs.find((input) => input.name === 'seed_2')?.wfengine_field_name).toBe('noise_seed')
    // A sampler the list does not know is still one of the choices.
    const sampler = inputs.find((input) => input.name === 'sampler_2')
    expect((sampler?.validator_attrs?.values as string[])[0]).toBe('my_own_sampler')
    expect(inputs.filter((input) => input.name.startsWith('negative_prompt'))).toHaveLength(1)
  })

  it('does not offer a field another node feeds', () => {
    const sampler = txt2img['3'] ?? { class_type: 'KSampler', inputs: {} }
    const workflow: ComfyApiWorkflow = {
      ...txt2img,
      '3': { ...sampler, inputs: { ...sampler.inputs, seed: ['20', 0] } },
      '20': { class_type: 'SeedGenerator', inputs: { seed: 5 } },
    }
    const { inputs, notExposed } = exposeComfyWorkflow(workflow)
    expect(inputs.some((input) => input.name === 'seed')).toBe(false)
    expect(notExposed).toEqual([{ nodeId: '20', classType: 'SeedGenerator' }])
  })
})

describe('reading ComfyUI files', () => {
  it('reads the API form as it is', () => {
    const file = parseComfyFile(bytesOf('txt2img-api.json'), 'txt2img-api.json')
    expect(file.workflow).toEqual(txt2img)
    expect(file.editor).toBeNull()
  })

  it('maps the editor form’s widgets to field names and follows its links, through reroutes', () => {
    const file = parseComfyFile(bytesOf('txt2img-editor.json'), 'txt2img-editor.json')
    // The same graph as the API form: the note and the reroute gone, control_after_generate
    // (the editor's own setting) left out, links as [node id, output index].
    expect(file.workflow).toEqual(txt2img)
    expect(file.editor).toEqual(jsonOf('txt2img-editor.json'))
  })

  it('maps the widgets of the other core nodes, primitives, bypassed and unknown nodes', () => {
    const editor = {
      nodes: [
        { id: 1, type: 'LoadImage', mode: 0, widgets_values: ['cat.png', 'image'] },
        {
          id: 2,
          type: 'ImageScale',
          mode: 0,
          inputs: [
            { name: 'image', type: 'IMAGE', link: 1 },
            { name: 'width', type: 'INT', link: 2, widget: { name: 'width' } },
          ],
          widgets_values: ['bilinear', 512, 768, 'center'],
        },
        { id: 3, type: 'PrimitiveNode', mode: 0, widgets_values: [1024, 'fixed'] },
        {
          id: 4,
          type: 'ImageInvert',
          mode: 4,
          inputs: [{ name: 'image', type: 'IMAGE', link: 3 }],
          outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [4] }],
        },
        {
          id: 5,
          type: 'LoraLoader',
          mode: 0,
          widgets_values: ['detail.safetensors', 0.8, 0.6],
        },
        { id: 6, type: 'FancyNode', mode: 0, widgets_values: [3, 'x'] },
        {
          id: 7,
          type: 'SaveImage',
          mode: 0,
          inputs: [{ name: 'images', type: 'IMAGE', link: 4 }],
          widgets_values: ['out'],
        },
        { id: 8, type: 'PreviewImage', mode: 2, inputs: [] },
      ],
      links: [
        [1, 1, 0, 2, 0, 'IMAGE'],
        [2, 3, 0, 2, 1, 'INT'],
        [3, 2, 0, 4, 0, 'IMAGE'],
        [4, 4, 0, 7, 0, 'IMAGE'],
      ],
    }
    const { workflow } = parseComfyFile(
      new TextEncoder().encode(JSON.stringify(editor)),
      'graph.json',
    )
    expect(workflow).toEqual({
      '1': { class_type: 'LoadImage', inputs: { image: 'cat.png', upload: 'image' } },
      '2': {
        class_type: 'ImageScale',
        // The primitive's value goes into the field it feeds; the width widget held the same.
        inputs: {
          upscale_method: 'bilinear',
          width: 1024,
          height: 768,
          crop: 'center',
          image: ['1', 0],
        },
      },
      '5': {
        class_type: 'LoraLoader',
        inputs: { lora_name: 'detail.safetensors', strength_model: 0.8, strength_clip: 0.6 },
      },
      '6': { class_type: 'FancyNode', inputs: {}, _meta: { widgets_values: [3, 'x'] } },
      // The bypassed inverter hands its own input on.
      '7': { class_type: 'SaveImage', inputs: { filename_prefix: 'out', images: ['2', 0] } },
    })
  })

  it('reads a PNG that ComfyUI saved, both forms', async () => {
    const editor = readFileSync(join(FIXTURES, 'txt2img-editor.json'), 'utf8')
    const png = await comfyPng({
      prompt: JSON.stringify(txt2img),
      workflow: editor,
    })
    const file = parseComfyFile(png, 'ComfyUI_00001_.png')
    expect(file.workflow).toEqual(txt2img)
    expect(file.editor).toEqual(JSON.parse(editor))
    expect(looksLikeComfyWorkflow(png)).toBe(true)
    // With only the editor form, the API form is made from it.
    const editorOnly = parseComfyFile(await comfyPng({ workflow: editor }), 'editor-only.png')
    expect(editorOnly.workflow).toEqual(txt2img)
  })

  it('reads a WebP that ComfyUI saved, its graph in the EXIF text tags', async () => {
    const webp = new Uint8Array(
      await sharp({
        create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 90, b: 30 } },
      })
        .webp()
        .withExif({ IFD0: { Model: `prompt:${JSON.stringify(txt2img)}`, Make: 'workflow:{}' } })
        .toBuffer(),
    )
    expect(parseComfyFile(webp, 'ComfyUI_00002_.webp').workflow).toEqual(txt2img)
  })

  it('refuses a picture without a workflow, and anything that is not one, saying what it expected', async () => {
    const png = await plainPng()
    const noWorkflow = refused(() => parseComfyFile(png, 'holiday.png'))
    expect(noWorkflow.code).toBe('NO_WORKFLOW_IN_PICTURE')
    expect(noWorkflow.message).toContain('This picture carries no workflow')
    expect(looksLikeComfyWorkflow(png)).toBe(false)

    for (const [name, text] of [
      ['notes.txt', 'just some words'],
      ['flow.json', JSON.stringify({ name: 'A flow', nodes: [] })],
      ['empty.json', ''],
      ['list.json', '[1, 2, 3]'],
    ] as const) {
      const error = refused(() => parseComfyFile(new TextEncoder().encode(text), name))
      expect(error.code).toBe('NOT_A_WORKFLOW')
      expect(error.message).toContain(name)
      expect(error.message).toContain(WHAT_A_WORKFLOW_IS)
    }
    const gif = new Uint8Array(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'))
    expect(refused(() => parseComfyFile(gif, 'a.gif')).message).toContain('image/gif')
  })
})

describe('the words of an import', () => {
  it('names a workflow from its file name', () => {
    expect(nameFromFileName('sdxl_txt2img-v2.json')).toBe('Sdxl txt2img v2')
    expect(nameFromFileName('/home/me/flows/ComfyUI_00001_.png')).toBe('ComfyUI 00001')
    expect(nameFromFileName('___.json')).toBe('Imported workflow')
  })

  it('counts inputs, outputs and custom nodes in the singular and the plural', () => {
    const summary = (inputs: number, outputs: number, custom: number) =>
      importSummary({
        workflow: {
          inputs: Array.from({ length: inputs }),
          outputs: Array.from({ length: outputs }),
        },
        notExposed: Array.from({ length: custom }, (_, i) => ({
          nodeId: String(i),
          classType: 'X',
        })),
      } as unknown as ImportedWorkflow)
    expect(summary(6, 1, 1)).toBe('6 inputs, 1 output; 1 custom node not exposed')
    expect(summary(1, 2, 0)).toBe('1 input, 2 outputs')
    expect(summary(0, 1, 3)).toBe('0 inputs, 1 output; 3 custom nodes not exposed')
  })
})
