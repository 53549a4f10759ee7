import { z } from 'zod'
import type { Flow, FlowInput, FlowNode, FlowNodeInput, FlowNodeOutput, FlowOutput } from '../api'

/**
 * Flows as both ends of the IPC boundary see them: the flow file format (`flowDocumentSchema`,
 * `parseFlowDocument`), how variable types connect (`typeConnection`), and the problems the
 * executor's validation reports for the editor to show on the canvas (`FlowProblem`).
 * Runtime-free apart from zod. The type-family table has a twin in the sandbox, checked as one by
 * `test/unit/twins/type-families.test.ts`.
 *
 * The file format is the service's Flow with its graph embedded (`nodes` with their `inputs` and
 * `outputs`, the flow's `inputs` and `outputs`), so a flow exported from the service reads as is.
 * A hand-written file may leave out what the service fills in by itself (timestamps, counters,
 * canvas defaults, nulls); `flow_id` and `flow_node_id` default to the record they sit in. Fields
 * the format does not know are refused rather than dropped: a misspelt `source_ouput_id` would
 * otherwise silently disconnect an edge.
 */

export const NODE_KINDS = ['model', 'builtin', 'wfengine_workflow', 'sub_flow'] as const
export type NodeKind = (typeof NODE_KINDS)[number]

export const isNodeKind = (code: string): code is NodeKind =>
  (NODE_KINDS as readonly string[]).includes(code)

/** The field of a node that names what it runs, by kind. */
export const NODE_TARGET_FIELD = {
  model: 'model_id',
  builtin: 'builtin_node_code',
  wfengine_workflow: 'wfengine_workflow_id',
  sub_flow: 'sub_flow_id',
} as const satisfies Record<NodeKind, keyof FlowNode>

// ---- Variable types

/**
 * Which variable types feed one another. The variable-types catalog lists codes and words only,
 * so the rules live here, shared by the editor (which edges it lets a user draw) and the
 * executor (which it refuses): text-like codes feed each other, so do number-like ones; every
 * other code feeds only itself. A code this table does not know connects only to itself.
 *
 * Twin of `src-main/sandbox/authoring/graph/type-family.ts` (the service's rule, as the sandbox
 * plays it): shared by the client's two ends, but kept apart from the sandbox on purpose, since
 * one rule for both sides would hide its own bugs from every test; checked as one by
 * `test/unit/twins/type-families.test.ts`, which runs every pair of port types through both.
 */
const TYPE_FAMILY: Readonly<Record<string, string>> = {
  text: 'text',
  string: 'text',
  enum: 'text',
  integer: 'number',
  number: 'number',
  seed: 'number',
  boolean: 'boolean',
  image: 'image',
  video: 'video',
}

/**
 * How a node's seed input is set (issue 19, "seeds are inputs"): `locked` sends the value typed
 * into the node, every run; `random` (the dice) has the client draw a seed whenever the node runs,
 * before it is dispatched, so the seed is known and recorded as an input of that run. The mode
 * lives in the node input's `behavior_code`, the service's own field for what happens to an input
 * left out: `randomize` is the dice, anything else with a value is locked. A seed with no value is
 * random, so flow files written before the mode existed read as they always ran.
 */
export type SeedMode = 'locked' | 'random'

/** The variable type of a seed, and the behavior code that stands for the dice. */
export const SEED_TYPE = 'seed'
export const RANDOM_SEED_BEHAVIOR = 'randomize'

export function seedModeOf(
  input: { value?: unknown; behavior_code?: string | null | undefined } | undefined,
): SeedMode {
  if (input === undefined || input.value === null || input.value === undefined) return 'random'
  return input.behavior_code === RANDOM_SEED_BEHAVIOR ? 'random' : 'locked'
}

/**
 * The node log line that says which seed the client drew for a run: written by the executor,
 * read back by the inspector to show the last drawn seed beside the dice.
 */
export function drawnSeedMessage(name: string, seed: number): string {
  return `Drew ${name} ${seed} for this run. Lock it in the node's inspector to keep it.`
}

/** The seed a `drawnSeedMessage` line names for the input `name`; null for any other line. */
export function drawnSeedIn(message: string, name: string): number | null {
  const prefix = `Drew ${name} `
  if (!message.startsWith(prefix)) return null
  const seed = Number(message.slice(prefix.length).split(' ')[0])
  return Number.isSafeInteger(seed) && seed >= 0 ? seed : null
}

/** The codes the rules above know, for when the variable-types catalog is not at hand. */
export const KNOWN_VARIABLE_TYPES = Object.keys(TYPE_FAMILY)

const LIST_TYPE = /^(.+)(?:\[\]|_list)$/

/**
 * A list of values of one type is written `T[]` (`image[]`); `T_list` reads the same. The
 * contract's catalog has no list code; these are the spellings the executor's runners know.
 */
export const listType = (element: string): string => `${element}[]`

/** `T` for `T[]` (or `T_list`), null for a type that is not a list. */
export function listElement(type: string): string | null {
  return LIST_TYPE.exec(type)?.[1] ?? null
}

/**
 * How a value of type `from` reaches a port of type `to`:
 * - `direct`: as it is (same type or family; a single value into a list port is a one-item list);
 * - `fan_out`: a list into a port of its element type, one run per item (model nodes only: all
 *   items go to the service as one batch);
 * - `none`: they do not connect.
 */
export type TypeConnection = 'direct' | 'fan_out' | 'none'

export function typeConnection(from: string, to: string): TypeConnection {
  if (from === to) return 'direct'
  const fromElement = listElement(from)
  const toElement = listElement(to)
  if (fromElement !== null && toElement !== null) {
    return typeConnection(fromElement, toElement) === 'direct' ? 'direct' : 'none'
  }
  if (toElement !== null) return typeConnection(from, toElement) === 'direct' ? 'direct' : 'none'
  if (fromElement !== null) return typeConnection(fromElement, to) === 'direct' ? 'fan_out' : 'none'
  const family = TYPE_FAMILY[from]
  return family !== undefined && family === TYPE_FAMILY[to] ? 'direct' : 'none'
}

/** Whether `from` feeds `to` as it is, without a fan-out. */
export const typesConnect = (from: string, to: string): boolean =>
  typeConnection(from, to) === 'direct'

// ---- Problems

export const FLOW_PROBLEM_CODES = [
  // The file itself.
  'INVALID_JSON',
  'UNKNOWN_FIELD',
  'MISSING_FIELD',
  'INVALID_FIELD',
  // Identity.
  'DUPLICATE_ID',
  'DUPLICATE_NAME',
  'DUPLICATE_SLUG',
  // What a node runs.
  'UNKNOWN_NODE_TYPE',
  'TARGET_MISSING',
  'TARGET_CONFLICT',
  'UNKNOWN_MODEL',
  'UNKNOWN_WORKFLOW',
  'UNKNOWN_SUB_FLOW',
  'UNKNOWN_BUILTIN',
  'TARGET_DETAILS_UNKNOWN',
  'SUB_FLOW_RECURSION',
  // Ports and types.
  'UNKNOWN_PORT',
  'UNKNOWN_TYPE',
  'UNKNOWN_VALIDATOR',
  'TYPE_MISMATCH',
  'INVALID_VALUE',
  'VALIDATOR_VIOLATION',
  // Wiring.
  'DANGLING_CONNECTION',
  'AMBIGUOUS_INPUT',
  'MISSING_REQUIRED_INPUT',
  'CYCLE',
  'UNKNOWN_FLOW_INPUT',
  'UNKNOWN_FLOW_OUTPUT',
  'UNMAPPED_FLOW_OUTPUT',
  'FLOW_OUTPUT_CONFLICT',
  'INVALID_CONFIG',
  'RETRY_NOT_BACKWARD',
] as const
export type FlowProblemCode = (typeof FLOW_PROBLEM_CODES)[number]

/**
 * One thing wrong with a flow, placed so the editor can mark it: `path` is a dotted path into
 * the flow document in the service's own form (`nodes.2.inputs.0.source_output_id`, the same as
 * a 422's `errors[].field`), and the ids name what to highlight on the canvas.
 */
export interface FlowProblem {
  code: FlowProblemCode
  /** Says what is wrong and what to do; may change, unlike `code`. */
  message: string
  path: string
  nodeId?: string
  inputName?: string
  outputId?: string
  /** CYCLE: the nodes along the loop, in the direction data flows. */
  nodeIds?: string[]
  /** SUB_FLOW_RECURSION: the flows along the loop, from this flow's sub-flow. */
  flowIds?: string[]
}

// ---- The file format

/** What the service fills in by itself, for a hand-written file that leaves it out. */
const UNSET_TIME = '1970-01-01T00:00:00.000+00:00'

const id = z.guid({ error: 'must be a uuid' })
const text = z.string().nullable().default(null)
const time = z.iso.datetime({ offset: true, error: 'must be a date-time with its zone' })
const decimal = z
  .string()
  .regex(/^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/, { error: 'must be a decimal number as text' })
const attrs = z.record(z.string(), z.unknown()).nullable().default(null)
const json = z.json().default(null)
const stamps = { created_at: time.default(UNSET_TIME), updated_at: time.default(UNSET_TIME) }

const nodeInputSchema = z.strictObject({
  id,
  flow_node_id: id.optional(),
  name: z.string().min(1),
  display_name: text,
  variable_type_code: z.string().min(1),
  validator_code: text,
  validator_attrs: attrs,
  is_required: z.boolean().default(false),
  default_value: json,
  sort_order: z.int().default(0),
  behavior_code: text,
  value: json,
  source_output_id: id.nullable().default(null),
  connection_label: text,
  connection_style_code: text,
  retry_source_output_id: id.nullable().default(null),
  ...stamps,
})

const nodeOutputSchema = z.strictObject({
  id,
  flow_node_id: id.optional(),
  name: z.string().min(1),
  display_name: text,
  variable_type_code: z.string().min(1),
  validator_code: text,
  validator_attrs: attrs,
  sort_order: z.int().default(0),
  ...stamps,
})

const nodeSchema = z.strictObject({
  id,
  flow_id: id.optional(),
  slug: text,
  label: z.string(),
  subtitle: text,
  type_code: z.string().min(1),
  x: z.number().default(0),
  y: z.number().default(0),
  width: z.number().default(220),
  config: z.record(z.string(), z.unknown()).default({}),
  collapsed: z.boolean().default(false),
  model_id: id.nullable().default(null),
  builtin_node_code: text,
  wfengine_workflow_id: id.nullable().default(null),
  sub_flow_id: id.nullable().default(null),
  ...stamps,
  // The service leaves the embedded flow out inside a flow's nodes.
  flow: z.null().optional(),
  inputs: z.array(nodeInputSchema).default([]),
  outputs: z.array(nodeOutputSchema).default([]),
})

const flowInputSchema = z.strictObject({
  id,
  flow_id: id.optional(),
  name: z.string().min(1),
  display_name: text,
  description: text,
  variable_type_code: z.string().min(1),
  validator_code: text,
  validator_attrs: attrs,
  is_required: z.boolean().default(false),
  default_value: json,
  sort_order: z.int().default(0),
  ...stamps,
})

const flowOutputSchema = z.strictObject({
  id,
  flow_id: id.optional(),
  name: z.string().min(1),
  display_name: text,
  description: text,
  variable_type_code: z.string().min(1),
  validator_code: text,
  validator_attrs: attrs,
  sort_order: z.int().default(0),
  ...stamps,
})

const userSummarySchema = z.strictObject({
  id,
  email: z.string(),
  first_name: text,
  last_name: text,
  avatar_url: text,
})

const flowStarSchema = z.strictObject({ id, user_id: id, flow_id: id, created_at: time })

/** A flow file as written; `parseFlowDocument` also fills `flow_id` and `flow_node_id`. */
export const flowDocumentSchema = z.strictObject({
  id,
  slug: z.string().optional(),
  name: z.string().min(1),
  description: text,
  cover_url: text,
  org_id: id.nullable().default(null),
  flow_type_code: text,
  category_code: text,
  visibility_code: text,
  source_visibility_code: text,
  status_code: text,
  version: z.int().min(0).default(0),
  current_version_id: id.nullable().default(null),
  estimated_cost: decimal.nullable().default(null),
  context_variables: z.record(z.string(), z.unknown()).default({}),
  run_count: z.int().min(0).default(0),
  avg_duration: decimal.nullable().default(null),
  cost_per_run: decimal.nullable().default(null),
  featured_at: time.nullable().default(null),
  created_by: id.nullable().default(null),
  ...stamps,
  nodes: z.array(nodeSchema).default([]),
  inputs: z.array(flowInputSchema).default([]),
  outputs: z.array(flowOutputSchema).default([]),
  created_by_user: userSummarySchema.nullable().optional(),
  recent_stars: z.array(flowStarSchema).max(50).optional(),
})

/** A parsed flow file: the service's Flow with its graph embedded. */
export interface FlowFile extends Flow {
  nodes: FlowNode[]
  inputs: FlowInput[]
  outputs: FlowOutput[]
}

export type FlowParseResult = { ok: true; flow: FlowFile } | { ok: false; problems: FlowProblem[] }

/** A name in a URL, from the flow's name, for a file that leaves `slug` out. */
function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return slug === '' ? 'flow' : slug
}

function at(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

/** The node (and its input) a path into the document is about, for the canvas. */
function placeOf(root: unknown, path: readonly PropertyKey[]): Partial<FlowProblem> {
  if (path[0] !== 'nodes' || typeof path[1] !== 'number') return {}
  const nodeId = at(root, path.slice(0, 2).concat('id'))
  const place: Partial<FlowProblem> = typeof nodeId === 'string' ? { nodeId } : {}
  if (path[2] === 'inputs' && typeof path[3] === 'number') {
    const name = at(root, path.slice(0, 4).concat('name'))
    if (typeof name === 'string') place.inputName = name
  }
  if (path[2] === 'outputs' && typeof path[3] === 'number') {
    const outputId = at(root, path.slice(0, 4).concat('id'))
    if (typeof outputId === 'string') place.outputId = outputId
  }
  return place
}

const dotted = (path: readonly PropertyKey[]) => path.map(String).join('.')

function issueProblems(root: unknown, issue: z.core.$ZodIssue): FlowProblem[] {
  const path = dotted(issue.path)
  const where = path === '' ? 'The flow' : path
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      code: 'UNKNOWN_FIELD',
      message: `${where} has a field ${JSON.stringify(key)} that the flow format does not know; check its spelling or remove it.`,
      path: path === '' ? key : `${path}.${key}`,
      ...placeOf(root, issue.path),
    }))
  }
  const missing = issue.path.length > 0 && at(root, issue.path) === undefined
  return [
    {
      code: missing ? 'MISSING_FIELD' : 'INVALID_FIELD',
      message: missing
        ? `${where} is required; add it.`
        : `${where} is not valid: ${issue.message.replace(/^Invalid input: /, '')}.`,
      path,
      ...placeOf(root, issue.path),
    },
  ]
}

/**
 * Reads a flow file: its JSON text, or the value already parsed. Never throws: whatever is wrong
 * comes back as problems, all of them at once.
 */
export function parseFlowDocument(input: unknown): FlowParseResult {
  let root = input
  if (typeof input === 'string') {
    try {
      root = JSON.parse(input)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      return {
        ok: false,
        problems: [
          {
            code: 'INVALID_JSON',
            message: `The flow file is not valid JSON (${reason}); fix the file or export the flow again.`,
            path: '',
          },
        ],
      }
    }
  }
  const parsed = flowDocumentSchema.safeParse(root)
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.flatMap((issue) => issueProblems(root, issue)),
    }
  }
  const { slug, ...rest } = parsed.data
  const flowId = rest.id
  const problems: FlowProblem[] = []
  const owner = (
    given: string | undefined,
    parent: string,
    path: string,
    field: 'flow_id' | 'flow_node_id',
  ) => {
    if (given !== undefined && given !== parent) {
      problems.push({
        code: 'INVALID_FIELD',
        message: `${path}.${field} names another ${field === 'flow_id' ? 'flow' : 'node'} than the one it sits in; remove it or set it to ${parent}.`,
        path: `${path}.${field}`,
        ...placeOf(
          root,
          path.split('.').map((key) => (/^\d+$/.test(key) ? Number(key) : key)),
        ),
      })
    }
    return parent
  }
  const nodes: FlowNode[] = rest.nodes.map((node, i) => {
    const path = `nodes.${i}`
    const inputs: FlowNodeInput[] = node.inputs.map((item, j) => ({
      ...item,
      flow_node_id: owner(item.flow_node_id, node.id, `${path}.inputs.${j}`, 'flow_node_id'),
    }))
    const outputs: FlowNodeOutput[] = node.outputs.map((item, j) => ({
      ...item,
      flow_node_id: owner(item.flow_node_id, node.id, `${path}.outputs.${j}`, 'flow_node_id'),
    }))
    const { flow: _flow, ...fields } = node
    return { ...fields, flow_id: owner(node.flow_id, flowId, path, 'flow_id'), inputs, outputs }
  })
  const inputs: FlowInput[] = rest.inputs.map((item, i) => ({
    ...item,
    flow_id: owner(item.flow_id, flowId, `inputs.${i}`, 'flow_id'),
  }))
  const outputs: FlowOutput[] = rest.outputs.map((item, i) => ({
    ...item,
    flow_id: owner(item.flow_id, flowId, `outputs.${i}`, 'flow_id'),
  }))
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    flow: { ...rest, slug: slug ?? slugOf(rest.name), nodes, inputs, outputs },
  }
}
