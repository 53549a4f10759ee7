import type {
  ModelSolutionLink,
  Solution,
  SolutionFlowLink,
  SolutionWorkflowLink,
  Workflow,
  WorkflowInputCreate,
  WorkflowOutputCreate,
} from '../../../src-shared/api'
import { CATALOG_TIMESTAMP, catalogId, findModel } from '../models'
import { SOLUTION_SECTIONS } from '../reference-data'
import { templateId } from './templates'
import { buildWorkflowPorts } from './workflow-ports'

/**
 * The global sample workflows (every organization reads them; none can change them) and the
 * solutions, which bundle flow templates, catalog models and sample workflows per section.
 */

interface SampleWorkflowSpec {
  slug: string
  name: string
  description: string
  category: string
  workflow_json: Record<string, unknown>
  inputs: Omit<WorkflowInputCreate, 'id'>[]
  outputs: Omit<WorkflowOutputCreate, 'id'>[]
  models: Record<string, unknown>
}

const WORKFLOW_SPECS: readonly SampleWorkflowSpec[] = [
  {
    slug: 'basic-text-to-image',
    name: 'Basic text to image',
    description:
      'The classic workflow-engine graph: load a checkpoint, encode the prompts, sample a latent and decode it to a picture.',
    category: 'text-to-image',
    workflow_json: {
      '1': { class_type: 'CheckpointLoader', inputs: { checkpoint: 'sandbox-base-v1' } },
      '2': { class_type: 'TextEncode', inputs: { text: 'a lighthouse at dusk', clip: ['1', 1] } },
      '3': { class_type: 'TextEncode', inputs: { text: '', clip: ['1', 1] } },
      '4': { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
      '5': {
        class_type: 'Sampler',
        inputs: {
          seed: 0,
          steps: 20,
          cfg: 7,
          model: ['1', 0],
          positive: ['2', 0],
          negative: ['3', 0],
          latent_image: ['4', 0],
        },
      },
      '6': { class_type: 'LatentDecode', inputs: { samples: ['5', 0], vae: ['1', 2] } },
      '7': { class_type: 'SaveImage', inputs: { images: ['6', 0], filename_prefix: 'atelier' } },
    },
    inputs: [
      {
        name: 'prompt',
        variable_type_code: 'text',
        display_name: 'Prompt',
        description: 'What to picture.',
        default_behavior_code: 'require',
        is_required: true,
        wfengine_node_id: '2',
        wfengine_field_name: 'text',
      },
      {
        name: 'negative_prompt',
        variable_type_code: 'text',
        display_name: 'Negative prompt',
        description: 'What to avoid.',
        default_behavior_code: 'omit',
        wfengine_node_id: '3',
        wfengine_field_name: 'text',
      },
      {
        name: 'width',
        variable_type_code: 'integer',
        display_name: 'Width',
        default_behavior_code: 'use_default',
        default_value: 512,
        validator_code: 'range',
        validator_attrs: { min: 64, max: 2048 },
        wfengine_node_id: '4',
        wfengine_field_name: 'width',
      },
      {
        name: 'height',
        variable_type_code: 'integer',
        display_name: 'Height',
        default_behavior_code: 'use_default',
        default_value: 512,
        validator_code: 'range',
        validator_attrs: { min: 64, max: 2048 },
        wfengine_node_id: '4',
        wfengine_field_name: 'height',
      },
      {
        name: 'seed',
        variable_type_code: 'seed',
        display_name: 'Seed',
        default_behavior_code: 'randomize',
        wfengine_node_id: '5',
        wfengine_field_name: 'seed',
      },
    ],
    outputs: [
      {
        name: 'image',
        variable_type_code: 'image',
        display_name: 'Image',
        description: 'The picture the save node writes.',
        wfengine_node_id: '7',
        wfengine_field_name: 'images',
      },
    ],
    models: { checkpoints: ['sandbox-base-v1'] },
  },
  {
    slug: 'upscale-with-a-model',
    name: 'Upscale with a model',
    description: 'Loads an image and enlarges it four times with an upscaling model.',
    category: 'upscale',
    workflow_json: {
      '1': { class_type: 'LoadImage', inputs: { image: 'input.png' } },
      '2': { class_type: 'UpscaleModelLoader', inputs: { model_name: 'sandbox-upscale-4x' } },
      '3': {
        class_type: 'UpscaleImageWithModel',
        inputs: { upscale_model: ['2', 0], image: ['1', 0] },
      },
      '4': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: 'upscaled' } },
    },
    inputs: [
      {
        name: 'image',
        variable_type_code: 'image',
        display_name: 'Image',
        description: 'The image to enlarge.',
        default_behavior_code: 'require',
        is_required: true,
        wfengine_node_id: '1',
        wfengine_field_name: 'image',
      },
    ],
    outputs: [
      {
        name: 'image',
        variable_type_code: 'image',
        display_name: 'Upscaled image',
        wfengine_node_id: '4',
        wfengine_field_name: 'images',
      },
    ],
    models: { upscale_models: ['sandbox-upscale-4x'] },
  },
]

function buildWorkflow(spec: SampleWorkflowSpec): Workflow {
  const id = catalogId('wfengine-workflow', spec.slug)
  const ports = buildWorkflowPorts(
    {
      inputs: spec.inputs.map((input, index) => ({
        ...input,
        id: catalogId('wfengine-workflow', spec.slug, 'in', input.name),
        sort_order: index,
      })),
      outputs: spec.outputs.map((output, index) => ({
        ...output,
        id: catalogId('wfengine-workflow', spec.slug, 'out', output.name),
        sort_order: index,
      })),
    },
    {
      workflowId: id,
      now: CATALOG_TIMESTAMP,
      newId: () => {
        throw new Error(`sample workflow ${spec.slug}: every port needs a fixed id`)
      },
      existing: new Map(),
      workflowJson: spec.workflow_json,
    },
  )
  if (ports.problems.length > 0) {
    throw new Error(
      `sample workflow ${spec.slug}: ${ports.problems.map((p) => p.message).join(' ')}`,
    )
  }
  return {
    id,
    org_id: null,
    slug: spec.slug,
    name: spec.name,
    description: spec.description,
    workflow_json: spec.workflow_json,
    version: '1.0.0',
    is_public: true,
    status_code: 'active',
    created_by: null,
    environment: { engine: 'sandbox', python: '3.11' },
    models: spec.models,
    custom_nodes: {},
    graph: null,
    resources: { gpu: 'none', vram_gb: 0 },
    created_at: CATALOG_TIMESTAMP,
    updated_at: CATALOG_TIMESTAMP,
    deleted_at: null,
    deleted_by: null,
    category_code: spec.category,
    inputs: ports.inputs,
    outputs: ports.outputs,
  }
}

export function buildSampleWorkflows(): Workflow[] {
  return WORKFLOW_SPECS.map(buildWorkflow)
}

interface SolutionSpec {
  slug: string
  title: string
  subtitle: string
  section: (typeof SOLUTION_SECTIONS)[number]['code']
  icon: string
  colours: [accent: string, start: string, end: string]
  content: string
  flows: string[]
  models: string[]
  workflows: string[]
}

const SOLUTION_SPECS: readonly SolutionSpec[] = [
  {
    slug: 'first-pictures',
    title: 'Your first pictures',
    subtitle: 'From a sentence to an image in one node.',
    section: 'getting-started',
    icon: 'sparkles',
    colours: ['#7c3aed', '#ede9fe', '#c4b5fd'],
    content:
      '## Your first pictures\n\nStart from **Prompt to image**: type a prompt, run the flow, and see the picture. Then try **Prompt template to image** to reuse one wording for many subjects.',
    flows: ['prompt-to-image', 'prompt-template-to-image', 'random-style'],
    models: ['atelier/text-to-image', 'atelier/caption'],
    workflows: ['basic-text-to-image'],
  },
  {
    slug: 'product-cut-outs',
    title: 'Product cut-outs',
    subtitle: 'Clean, enlarged product shots for a catalogue.',
    section: 'images',
    icon: 'scissors',
    colours: ['#0d9488', '#ccfbf1', '#5eead4'],
    content:
      '## Product cut-outs\n\nRemove the background of each product shot, save the cut-outs to your assets and enlarge the ones you need in print.',
    flows: ['cut-out-and-save', 'image-to-upscaled-image'],
    models: ['atelier/remove-background', 'atelier/upscale'],
    workflows: ['upscale-with-a-model'],
  },
  {
    slug: 'quality-checked-images',
    title: 'Quality-checked images',
    subtitle: 'Only keep the pictures that pass an evaluation.',
    section: 'images',
    icon: 'badge-check',
    colours: ['#2563eb', '#dbeafe', '#93c5fd'],
    content:
      '## Quality-checked images\n\nEvery picture is captioned and evaluated against its prompt; only those that reach the score you set are kept.',
    flows: ['generate-caption-and-evaluate', 'keep-the-good-ones'],
    models: ['atelier/text-to-image', 'atelier/caption'],
    workflows: [],
  },
  {
    slug: 'animated-clips',
    title: 'Animated clips',
    subtitle: 'Short looping animations from a prompt.',
    section: 'video',
    icon: 'film',
    colours: ['#db2777', '#fce7f3', '#f9a8d4'],
    content:
      '## Animated clips\n\nTurn a prompt into a short animated clip that plays in every browser.',
    flows: ['prompt-to-video'],
    models: ['atelier/text-to-video'],
    workflows: [],
  },
]

/** Link records carry no updated_at; the store's row needs one, so it mirrors created_at. */
type Stored<T> = T & { updated_at: string }

export interface SolutionData {
  solutions: Solution[]
  flowLinks: Stored<SolutionFlowLink>[]
  modelLinks: Stored<ModelSolutionLink>[]
  workflowLinks: Stored<SolutionWorkflowLink>[]
}

export function buildSolutions(): SolutionData {
  const data: SolutionData = { solutions: [], flowLinks: [], modelLinks: [], workflowLinks: [] }
  SOLUTION_SPECS.forEach((spec, index) => {
    const id = catalogId('solution', spec.slug)
    const stamps = { created_at: CATALOG_TIMESTAMP }
    const flows = spec.flows.map((slug, order) => ({
      id: catalogId('solution', spec.slug, 'flow', slug),
      solution_id: id,
      flow_id: templateId(slug),
      sort_order: order,
      ...stamps,
    }))
    const models = spec.models.map((slug, order) => {
      const model = findModel(slug)
      if (!model) throw new Error(`solution ${spec.slug}: no model ${slug} in the catalog`)
      return {
        id: catalogId('solution', spec.slug, 'model', slug),
        solution_id: id,
        model_id: model.id,
        sort_order: order,
        ...stamps,
      }
    })
    const workflows = spec.workflows.map((slug, order) => ({
      id: catalogId('solution', spec.slug, 'workflow', slug),
      solution_id: id,
      wfengine_workflow_id: catalogId('wfengine-workflow', slug),
      sort_order: order,
      ...stamps,
    }))
    const [accent, start, end] = spec.colours
    data.solutions.push({
      id,
      title: spec.title,
      subtitle: spec.subtitle,
      slug: spec.slug,
      icon: spec.icon,
      accent_color: accent,
      gradient_start: start,
      gradient_end: end,
      content_markdown: spec.content,
      section_code: spec.section,
      sort_order: index,
      is_active: true,
      created_at: CATALOG_TIMESTAMP,
      updated_at: CATALOG_TIMESTAMP,
      solution_flows: flows,
      solution_models: models,
      solution_comfyui_workflows: workflows,
    })
    const mirror = { updated_at: CATALOG_TIMESTAMP }
    data.flowLinks.push(...flows.map((link) => ({ ...link, ...mirror })))
    data.modelLinks.push(...models.map((link) => ({ ...link, ...mirror })))
    data.workflowLinks.push(...workflows.map((link) => ({ ...link, ...mirror })))
  })
  return data
}
