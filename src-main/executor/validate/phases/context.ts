import type {
  FlowInput,
  FlowNode,
  FlowNodeInput,
  FlowNodeOutput,
  FlowOutput,
} from '../../../../src-shared/api'
import type { FlowProblem, FlowProblemCode } from '../../../../src-shared/domain/flow'
import type { FlowDocument } from '../../types'
import type { FlowCatalog } from '../catalog'
import type { ValidatorRule } from '../values'

/**
 * The one object the phases of `analyzeFlow` share: the flow, the catalog, the problems found so
 * far, and what each phase has learnt for the ones after it. The fields below are grouped by
 * the phase that sets them, in the order the phases run: a phase reads only the groups above its
 * own, so moving a phase means checking what it reads here.
 */
export interface AnalysisContext {
  readonly flow: FlowDocument
  readonly nodes: readonly FlowNode[]
  /** Asked once per key per validation (`remembered`). */
  readonly catalog: FlowCatalog
  /** In the order they are found: the order every caller shows them in. */
  readonly problems: FlowProblem[]
  readonly report: (code: FlowProblemCode, path: string, message: string, place?: Place) => void

  // resolveTargets
  /** By node index: what the node runs, null when that is not known (a problem says why). */
  targets: (Target | null)[]

  // readFanOutConfig
  /** By node index: the names `config.fan_out` gives, null when it gives none (or is invalid). */
  explicitFanOut: (ReadonlySet<string> | null)[]

  // checkPorts
  /** By node index: the inputs declared a list where the target takes one value. */
  declaredFanOut: string[][]

  // readMappings
  flowInputs: Map<string, FlowInput>
  flowOutputs: Map<string, FlowOutput>
  /** By node index: node input name → the flow input `config.flow_inputs` feeds it from. */
  mappedInputs: Map<string, string>[]
  outputLinks: FlowOutputLink[]

  // checkWiring
  outputsById: Map<string, OutputSource>
  /** By node index: the nodes each feeds through edges (retry edges left out), no repeats. */
  next: number[][]
  /** `${from}>${to}`: the first input of `to` fed by `from`, to name the edge closing a loop. */
  edgeInput: Map<string, number>

  // findLoops
  looped: boolean

  // checkTypes
  /** Node indexes, each after every node that feeds it; those a loop holds up left out. */
  order: number[]
  /** By node index: the inputs that fan out. */
  fanOut: string[][]
  /** By output id: the type each output carries, `T[]` when its node fans out. */
  outputTypes: Map<string, string>

  // checkRetries
  retries: RetryLink[]

  // bindInputs
  bindings: Map<string, InputBinding>[]
}

/** A port of what a node runs: a model input, a built-in's output, a sub-flow's flow input… */
export interface Port extends ValidatorRule {
  name: string
  variable_type_code: string
  is_required: boolean
  default_value: unknown
  behavior_code: string | null
}

export interface Target {
  title: string
  /** Null when the catalog does not know them. */
  inputs: readonly Port[] | null
  outputs: readonly Port[] | null
  otherInputs: boolean
  /** Inputs that take a list of their type whole, not item by item (a built-in's choice). */
  listInputs: ReadonlySet<string>
}

export interface RetrySource {
  /** The quality gate: the node whose output feeds the retry. */
  nodeId: string
  outputId: string
  outputName: string
}

/**
 * Where a node input's value comes from. `fanOut`: a list arrives at a single-value input, and
 * the node runs once per item (a model node: one batch).
 */
export type InputBinding = (
  | { from: 'edge'; nodeId: string; outputId: string; outputName: string }
  | { from: 'flow_input'; name: string }
  | { from: 'value'; value: unknown }
  | { from: 'default'; value: unknown }
  | { from: 'none' }
) & { fanOut: boolean; retry: RetrySource | null }

export interface RetryLink {
  gate: number
  output: FlowNodeOutput
  node: number
  inputName: string
  maxAttempts: number
}

export interface FlowOutputLink {
  name: string
  node: number
  output: FlowNodeOutput
}

export interface OutputSource {
  node: number
  output: FlowNodeOutput
}

export type Place = Pick<FlowProblem, 'nodeId' | 'inputName' | 'outputId' | 'nodeIds' | 'flowIds'>

/** A context before any phase: each phase's part empty, as a flow without nodes leaves it. */
export function openContext(flow: FlowDocument, sourceCatalog: FlowCatalog): AnalysisContext {
  const problems: FlowProblem[] = []
  const nodes = flow.nodes
  return {
    flow,
    nodes,
    catalog: remembered(sourceCatalog),
    problems,
    report: (code, path, message, place = {}) => {
      problems.push({ code, message, path, ...place })
    },
    targets: [],
    explicitFanOut: [],
    declaredFanOut: [],
    flowInputs: new Map(),
    flowOutputs: new Map(),
    mappedInputs: [],
    outputLinks: [],
    outputsById: new Map(),
    next: [],
    edgeInput: new Map(),
    looped: false,
    order: [],
    fanOut: [],
    outputTypes: new Map(),
    retries: [],
    bindings: [],
  }
}

/** Catalog lookups asked once per validation: a mirror-backed catalog reads SQLite each time. */
function remembered(catalog: FlowCatalog): FlowCatalog {
  const cache = <T>(lookup: (key: string) => T) => {
    const seen = new Map<string, T>()
    return (key: string): T => {
      if (seen.has(key)) return seen.get(key) as T
      const value = lookup(key)
      seen.set(key, value)
      return value
    }
  }
  return {
    model: cache((id) => catalog.model(id)),
    workflow: cache((id) => catalog.workflow(id)),
    flow: cache((id) => catalog.flow(id)),
    builtin: cache((code) => catalog.builtin(code)),
    variableTypes: () => catalog.variableTypes(),
    validators: () => catalog.validators(),
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export const given = (value: unknown) => value !== null && value !== undefined

export const nodeName = (node: FlowNode) =>
  `node ${JSON.stringify(node.label !== '' ? node.label : (node.slug ?? node.id))}`

/** The port of node `i`'s target that input `name` is for, when the target's ports are known. */
export const portOf = (context: AnalysisContext, i: number, name: string) =>
  context.targets[i]?.inputs?.find((p) => p.name === name)

/** Whether a list reaching input `name` of node `i` may fan out. */
export const mayFanOut = (context: AnalysisContext, i: number, name: string) =>
  context.nodes[i]?.type_code === 'model' && (context.explicitFanOut[i]?.has(name) ?? true)

/** The node output an edge (or a retry edge) of this id comes from; undefined for none. */
export const sourceOf = (context: AnalysisContext, outputId: string | null) =>
  outputId === null ? undefined : context.outputsById.get(outputId)

/** The type an output carries once fan-outs are known: `T[]` when its node runs per item. */
export const typeOfOutput = (context: AnalysisContext, output: FlowNodeOutput) =>
  context.outputTypes.get(output.id) ?? output.variable_type_code

/** Whether an input with nothing feeding it is still given a value (a default, or a random one). */
export function fillsItself(input: { default_value?: unknown; behavior_code?: string | null }) {
  return given(input.default_value) || input.behavior_code === 'randomize'
}

/** The default an unfed input takes, as the service applies it; undefined when none. */
export function defaultOf(input: FlowNodeInput | undefined, port: Port | undefined): unknown {
  const behavior = input?.behavior_code ?? port?.behavior_code ?? null
  if (behavior === 'omit' || behavior === 'randomize') return undefined
  const value = input?.default_value ?? port?.default_value ?? null
  return value === null ? undefined : value
}
