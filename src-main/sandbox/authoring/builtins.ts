import type { BuiltinNode, BuiltinNodeInput, BuiltinNodeOutput } from '../../../src-shared/api'
import { CATALOG_TIMESTAMP, type VariableTypeCode } from '../models'

/**
 * The built-in nodes a flow can use (`type_code: builtin`, `builtin_node_code: <code>`): small
 * steps the executor performs itself, between model runs. Their ports are what a node of that
 * code may have; `prompt_template` alone also takes inputs of any name (its placeholders).
 */

interface PortOptions {
  required?: boolean
  default?: unknown
  behavior?: 'require' | 'use_default' | 'randomize' | 'omit'
  range?: { min: number; max: number }
  values?: readonly string[]
  length?: { min: number; max: number }
}

function input(
  name: string,
  displayName: string,
  type: VariableTypeCode,
  options: PortOptions = {},
): Omit<BuiltinNodeInput, 'sort_order'> {
  const validator = options.range
    ? { code: 'range', attrs: options.range }
    : options.values
      ? { code: 'enum', attrs: { values: [...options.values] } }
      : options.length
        ? { code: 'length', attrs: options.length }
        : null
  const behavior =
    options.behavior ??
    (options.required ? 'require' : options.default === undefined ? 'omit' : 'use_default')
  return {
    name,
    display_name: displayName,
    variable_type_code: type,
    validator_code: validator?.code ?? null,
    validator_attrs: validator?.attrs ?? null,
    is_required: options.required ?? false,
    default_value: options.default ?? null,
    behavior_code: behavior,
  }
}

function output(
  name: string,
  displayName: string,
  type: VariableTypeCode,
): Omit<BuiltinNodeOutput, 'sort_order'> {
  return {
    name,
    display_name: displayName,
    variable_type_code: type,
    validator_code: null,
    validator_attrs: null,
  }
}

interface BuiltinSpec {
  code: string
  name: string
  description: string
  inputs: Omit<BuiltinNodeInput, 'sort_order'>[]
  outputs: Omit<BuiltinNodeOutput, 'sort_order'>[]
  /** Takes inputs besides the listed ones, named freely by the flow. */
  openInputs?: boolean
}

const SIZE = { min: 1, max: 4096 }

const SPECS: readonly BuiltinSpec[] = [
  {
    code: 'text',
    name: 'Text',
    description:
      'A piece of text, typed into value or taken from a flow input (config.flow_inputs: {"value": "<flow input name>"}).',
    inputs: [input('value', 'Text', 'text', { default: '' })],
    outputs: [output('text', 'Text', 'text')],
  },
  {
    code: 'number',
    name: 'Number',
    description: 'A number, typed into value or taken from a flow input.',
    inputs: [input('value', 'Number', 'number', { default: 0 })],
    outputs: [output('number', 'Number', 'number')],
  },
  {
    code: 'image',
    name: 'Image',
    description:
      'An image (a data: URL, an asset id or an image URL), given in value or taken from a flow input.',
    inputs: [input('value', 'Image', 'image', { required: true })],
    outputs: [output('image', 'Image', 'image')],
  },
  {
    code: 'prompt_template',
    name: 'Prompt template',
    description:
      'Fills the {name} placeholders of template with the node’s other inputs of the same name (add one text or number input per placeholder) and outputs the prompt.',
    inputs: [
      input('template', 'Template', 'text', { required: true, length: { min: 1, max: 4000 } }),
    ],
    outputs: [output('prompt', 'Prompt', 'text')],
    openInputs: true,
  },
  {
    code: 'image_resize',
    name: 'Resize image',
    description:
      'Scales an image to width × height: contain keeps the whole picture inside, cover fills and crops, fill stretches.',
    inputs: [
      input('image', 'Image', 'image', { required: true }),
      input('width', 'Width', 'integer', { default: 512, range: SIZE }),
      input('height', 'Height', 'integer', { default: 512, range: SIZE }),
      input('fit', 'Fit', 'enum', { default: 'contain', values: ['contain', 'cover', 'fill'] }),
    ],
    outputs: [output('image', 'Image', 'image')],
  },
  {
    code: 'image_crop',
    name: 'Crop image',
    description:
      'Cuts the width × height rectangle whose top-left corner is at x, y out of an image.',
    inputs: [
      input('image', 'Image', 'image', { required: true }),
      input('x', 'Left', 'integer', { default: 0, range: { min: 0, max: 4095 } }),
      input('y', 'Top', 'integer', { default: 0, range: { min: 0, max: 4095 } }),
      input('width', 'Width', 'integer', { required: true, range: SIZE }),
      input('height', 'Height', 'integer', { required: true, range: SIZE }),
    ],
    outputs: [output('image', 'Image', 'image')],
  },
  {
    code: 'pick_from_list',
    name: 'Pick from list',
    description:
      'Picks one line of items: the one at index (counting from 0, wrapping around), or a random one for each run when index is left out.',
    inputs: [
      input('items', 'Items (one per line)', 'text', { required: true }),
      input('index', 'Index', 'integer', {
        behavior: 'randomize',
        range: { min: 0, max: 1_000_000 },
      }),
    ],
    outputs: [output('item', 'Item', 'text')],
  },
  {
    code: 'compare',
    name: 'Compare',
    description: 'Compares value with threshold; passed is the outcome, for a branch to act on.',
    inputs: [
      input('value', 'Value', 'number', { required: true }),
      input('operator', 'Operator', 'enum', {
        default: '>=',
        values: ['<', '<=', '=', '!=', '>=', '>'],
      }),
      input('threshold', 'Threshold', 'number', { required: true }),
    ],
    outputs: [output('passed', 'Passed', 'boolean')],
  },
  {
    code: 'branch',
    name: 'Branch',
    description:
      'Passes the image on to if_true when condition is true, to if_false otherwise; the nodes fed by the output not taken are skipped.',
    inputs: [
      input('condition', 'Condition', 'boolean', { required: true }),
      input('image', 'Image', 'image', { required: true }),
    ],
    outputs: [output('if_true', 'If true', 'image'), output('if_false', 'If false', 'image')],
  },
  {
    code: 'evaluate',
    name: 'Evaluate',
    description:
      'Runs an automated quality evaluation of the image (as POST /v1/evaluations does): passed when the score reaches min_score; issues lists what the judges found, one per line.',
    inputs: [
      input('image', 'Image', 'image', { required: true }),
      input('prompt', 'Prompt it was made from', 'text'),
      input('instructions', 'Instructions', 'text'),
      input('min_score', 'Minimum score', 'number', { default: 0.5, range: { min: 0, max: 1 } }),
    ],
    outputs: [
      output('passed', 'Passed', 'boolean'),
      output('score', 'Score', 'number'),
      output('issues', 'Issues', 'text'),
    ],
  },
  {
    code: 'save_to_assets',
    name: 'Save to assets',
    description:
      'Saves an image or a video (connect one of them) to the organization’s assets, in folder_id when given, and outputs the new asset’s id.',
    inputs: [
      input('image', 'Image', 'image'),
      input('video', 'Video', 'video'),
      input('folder_id', 'Folder', 'string'),
      input('name', 'Name', 'string'),
    ],
    outputs: [output('asset_id', 'Asset id', 'string')],
  },
]

export const BUILTIN_NODES: readonly BuiltinNode[] = SPECS.map((spec, index) => ({
  code: spec.code,
  display_name: spec.name,
  description: spec.description,
  sort_order: index,
  is_active: true,
  created_at: CATALOG_TIMESTAMP,
  updated_at: CATALOG_TIMESTAMP,
  inputs: spec.inputs.map((port, order) => ({ ...port, sort_order: order })),
  outputs: spec.outputs.map((port, order) => ({ ...port, sort_order: order })),
}))

const BY_CODE = new Map(BUILTIN_NODES.map((node) => [node.code, node]))
const OPEN_INPUTS = new Set(SPECS.filter((spec) => spec.openInputs).map((spec) => spec.code))

export function findBuiltinNode(code: string): BuiltinNode | undefined {
  return BY_CODE.get(code)
}

/** Whether a node of this built-in may have inputs besides the listed ones. */
export function takesOtherInputs(code: string): boolean {
  return OPEN_INPUTS.has(code)
}
