import type { BuiltinNode, BuiltinNodeInput, BuiltinNodeOutput } from '../../../src-shared/api'

/**
 * The built-in nodes, as `GET /v1/builtin-nodes` describes them. The mirror does not keep that
 * list (it changes only with the service's version), so Atelier carries it: codes and ports as
 * the contract's BuiltinNode shape, the same the local sandbox serves. A caller that fetched the
 * service's own list passes it to the catalog instead.
 */

/** A built-in node and whether it takes inputs besides its listed ones. */
export interface CatalogBuiltin extends BuiltinNode {
  /** Inputs of any name are allowed besides the listed ones (a prompt template's placeholders). */
  otherInputs: boolean
  /** Inputs that also take a list of their type, whole (pick from list's items). */
  listInputs: readonly string[]
}

type Validator = { code: string; attrs: Record<string, unknown> } | null

interface PortSpec {
  type: string
  label: string
  required?: boolean
  default?: unknown
  /** Left out, the service (or the local runner) picks a value for each run. */
  randomize?: boolean
  validator?: Validator
}

const range = (min: number, max: number): Validator => ({ code: 'range', attrs: { min, max } })
const oneOf = (...values: string[]): Validator => ({ code: 'enum', attrs: { values } })
const length = (min: number, max: number): Validator => ({ code: 'length', attrs: { min, max } })

const UNSET_TIME = '1970-01-01T00:00:00.000+00:00'
const SIZE = range(1, 4096)

function input(name: string, spec: PortSpec, sortOrder: number): BuiltinNodeInput {
  return {
    name,
    display_name: spec.label,
    variable_type_code: spec.type,
    validator_code: spec.validator?.code ?? null,
    validator_attrs: spec.validator?.attrs ?? null,
    is_required: spec.required ?? false,
    default_value: spec.default ?? null,
    behavior_code: spec.required
      ? 'require'
      : spec.randomize
        ? 'randomize'
        : spec.default === undefined
          ? 'omit'
          : 'use_default',
    sort_order: sortOrder,
  }
}

function output(name: string, type: string, label: string, sortOrder: number): BuiltinNodeOutput {
  return {
    name,
    display_name: label,
    variable_type_code: type,
    validator_code: null,
    validator_attrs: null,
    sort_order: sortOrder,
  }
}

function builtin(
  code: string,
  name: string,
  description: string,
  inputs: Record<string, PortSpec>,
  outputs: Record<string, [type: string, label: string]>,
  extras: { otherInputs?: boolean; listInputs?: string[] } = {},
): Omit<CatalogBuiltin, 'sort_order'> {
  return {
    code,
    display_name: name,
    description,
    is_active: true,
    created_at: UNSET_TIME,
    updated_at: UNSET_TIME,
    inputs: Object.entries(inputs).map(([port, spec], order) => input(port, spec, order)),
    outputs: Object.entries(outputs).map(([port, [type, label]], order) =>
      output(port, type, label, order),
    ),
    otherInputs: extras.otherInputs ?? false,
    listInputs: extras.listInputs ?? [],
  }
}

export const BUILTIN_NODES: readonly CatalogBuiltin[] = [
  builtin(
    'text',
    'Text',
    'A piece of text, typed into value or taken from a flow input.',
    { value: { type: 'text', label: 'Text', default: '' } },
    { text: ['text', 'Text'] },
  ),
  builtin(
    'number',
    'Number',
    'A number, typed into value or taken from a flow input.',
    { value: { type: 'number', label: 'Number', default: 0 } },
    { number: ['number', 'Number'] },
  ),
  builtin(
    'image',
    'Image',
    'An image (a data: URL, an asset id or an image URL), given in value or taken from a flow input.',
    { value: { type: 'image', label: 'Image', required: true } },
    { image: ['image', 'Image'] },
  ),
  builtin(
    'prompt_template',
    'Prompt template',
    'Fills the {name} placeholders of template with the inputs of the same name.',
    { template: { type: 'text', label: 'Template', required: true, validator: length(1, 4000) } },
    { prompt: ['text', 'Prompt'] },
    { otherInputs: true },
  ),
  builtin(
    'image_resize',
    'Resize image',
    'Scales an image to width × height: contain, cover or fill.',
    {
      image: { type: 'image', label: 'Image', required: true },
      width: { type: 'integer', label: 'Width', default: 512, validator: SIZE },
      height: { type: 'integer', label: 'Height', default: 512, validator: SIZE },
      fit: {
        type: 'enum',
        label: 'Fit',
        default: 'contain',
        validator: oneOf('contain', 'cover', 'fill'),
      },
    },
    { image: ['image', 'Image'] },
  ),
  builtin(
    'image_crop',
    'Crop image',
    'Cuts the width × height rectangle whose top-left corner is at x, y out of an image.',
    {
      image: { type: 'image', label: 'Image', required: true },
      x: { type: 'integer', label: 'Left', default: 0, validator: range(0, 4095) },
      y: { type: 'integer', label: 'Top', default: 0, validator: range(0, 4095) },
      width: { type: 'integer', label: 'Width', required: true, validator: SIZE },
      height: { type: 'integer', label: 'Height', required: true, validator: SIZE },
    },
    { image: ['image', 'Image'] },
  ),
  builtin(
    'pick_from_list',
    'Pick from list',
    'Picks one line of items: the one at index (from 0, wrapping around), or a random one.',
    {
      items: { type: 'text', label: 'Items (one per line)', required: true },
      index: { type: 'integer', label: 'Index', randomize: true, validator: range(0, 1_000_000) },
    },
    { item: ['text', 'Item'] },
    { listInputs: ['items'] },
  ),
  builtin(
    'compare',
    'Compare',
    'Compares value with threshold; passed is the outcome, for a branch to act on.',
    {
      value: { type: 'number', label: 'Value', required: true },
      operator: {
        type: 'enum',
        label: 'Operator',
        default: '>=',
        validator: oneOf('<', '<=', '=', '!=', '>=', '>'),
      },
      threshold: { type: 'number', label: 'Threshold', required: true },
    },
    { passed: ['boolean', 'Passed'] },
  ),
  builtin(
    'branch',
    'Branch',
    'Passes the image on to if_true or if_false; the nodes fed by the other output are skipped.',
    {
      condition: { type: 'boolean', label: 'Condition', required: true },
      image: { type: 'image', label: 'Image', required: true },
    },
    { if_true: ['image', 'If true'], if_false: ['image', 'If false'] },
  ),
  builtin(
    'evaluate',
    'Evaluate',
    'Submits an evaluation of the image and waits for its verdict: passed when the score reaches min_score.',
    {
      image: { type: 'image', label: 'Image', required: true },
      prompt: { type: 'text', label: 'Prompt it was made from' },
      instructions: { type: 'text', label: 'Instructions' },
      min_score: { type: 'number', label: 'Minimum score', default: 0.5, validator: range(0, 1) },
    },
    { passed: ['boolean', 'Passed'], score: ['number', 'Score'], issues: ['text', 'Issues'] },
  ),
  builtin(
    'save_to_assets',
    'Save to assets',
    'Saves an image or a video (connect one) to the assets, in folder_id when given.',
    {
      image: { type: 'image', label: 'Image' },
      video: { type: 'video', label: 'Video' },
      folder_id: { type: 'string', label: 'Folder' },
      name: { type: 'string', label: 'Name' },
    },
    { asset_id: ['string', 'Asset id'] },
  ),
].map((node, index) => ({ ...node, sort_order: index }))

const KNOWN = new Map(BUILTIN_NODES.map((node) => [node.code, node]))

/** The service's own list of built-ins, with what Atelier knows about how each takes inputs. */
export function catalogBuiltins(nodes: readonly BuiltinNode[]): CatalogBuiltin[] {
  return nodes.map((node) => ({
    ...node,
    otherInputs: KNOWN.get(node.code)?.otherInputs ?? false,
    listInputs: KNOWN.get(node.code)?.listInputs ?? [],
  }))
}
