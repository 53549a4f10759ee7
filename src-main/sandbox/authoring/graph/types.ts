import type {
  FlowGraph,
  FlowInput,
  FlowNode,
  FlowNodeInput,
  FlowOutput,
} from '../../../../src-shared/api'
import type { FieldProblem } from '../../errors'

/**
 * A port of what a node runs: a model input, a built-in's output, a sub-flow's flow input, …,
 * spelt as the contract spells a node input, whose blanks it fills.
 */
export type Port = Pick<
  FlowNodeInput,
  'name' | 'display_name' | 'variable_type_code' | 'validator_code' | 'validator_attrs'
> &
  Partial<Pick<FlowNodeInput, 'is_required' | 'default_value' | 'behavior_code'>>

/** What a node runs, as far as wiring it is concerned. */
export interface NodeTarget {
  /** Becomes the node's subtitle, e.g. the model's slug. */
  title: string
  inputs: readonly Port[]
  outputs: readonly Port[]
  /** Inputs besides the listed ones are allowed (a prompt template's placeholders). */
  otherInputs?: boolean
  /** Micro-credits one run is expected to cost with these literal input values. */
  estimate?: (values: Record<string, unknown>) => number
  /** Sub-flows only: the flows that this one runs as its own sub-flows. */
  subFlowIds?: readonly string[]
}

export interface GraphResolver {
  model: (id: string) => NodeTarget | undefined
  builtin: (code: string) => NodeTarget | undefined
  workflow: (id: string) => NodeTarget | undefined
  flow: (id: string) => NodeTarget | undefined
}

export type RecordKind = 'node' | 'node_input' | 'node_output' | 'input' | 'output'

/** A record as stored before, by `${kind}:${id}`: kept records keep their timestamps. */
export interface StoredRecord {
  id: string
  created_at: string
  updated_at: string
}

export interface GraphContext {
  flowId: string
  now: string
  newId: () => string
  existing: ReadonlyMap<string, StoredRecord>
  resolver: GraphResolver
}

/** A flow node as stored: inside the flow and in `flow_nodes`, without the embedded flow. */
export type StoredNode = Omit<FlowNode, 'flow'>

export interface BuiltGraph {
  nodes: StoredNode[]
  inputs: FlowInput[]
  outputs: FlowOutput[]
  /** Micro-credits a run of the flow is expected to cost, from its models and sub-flows. */
  estimatedMicro: number
  problems: FieldProblem[]
}

export type GraphBody = Partial<FlowGraph>
