import type { Edge, Node } from '@xyflow/react'
import type {
  Flow,
  FlowInput,
  FlowNode,
  FlowNodeInput,
  FlowNodeOutput,
  FlowOutput,
} from '../../../../src-shared/api'

/**
 * The flow file as the editor holds it. A file may leave out what the service fills in by
 * itself, so everything but identity is optional here, and whatever a record carries is kept
 * as it came: the editor only ever rewrites the fields it edits.
 */
export type FileNodeInput = Partial<FlowNodeInput> &
  Pick<FlowNodeInput, 'id' | 'name' | 'variable_type_code'>

export type FileNodeOutput = Partial<FlowNodeOutput> &
  Pick<FlowNodeOutput, 'id' | 'name' | 'variable_type_code'>

export type FileNode = Omit<Partial<FlowNode>, 'inputs' | 'outputs'> &
  Pick<FlowNode, 'id' | 'label' | 'type_code'> & {
    inputs?: FileNodeInput[]
    outputs?: FileNodeOutput[]
  }

export type FileFlowInput = Partial<FlowInput> &
  Pick<FlowInput, 'id' | 'name' | 'variable_type_code'>

export type FileFlowOutput = Partial<FlowOutput> &
  Pick<FlowOutput, 'id' | 'name' | 'variable_type_code'>

/** The flow's own fields, with its inputs and outputs; its nodes live on the canvas. */
export type FileFlowFields = Omit<Partial<Flow>, 'nodes' | 'inputs' | 'outputs'> &
  Pick<Flow, 'id' | 'name'> & {
    inputs?: FileFlowInput[]
    outputs?: FileFlowOutput[]
  }

export type FileFlow = FileFlowFields & { nodes?: FileNode[] }

/**
 * What a canvas node carries: the node's record from the file. Its position is the canvas
 * node's `position` (the record's `x`/`y` are only what the file said), and its edges are its
 * inputs' `source_output_id`: one source of truth, so a deleted node cannot leave an edge behind.
 */
export type CanvasNodeData = { record: FileNode }

export type CanvasNode = Node<CanvasNodeData, 'flowNode'>

/** An edge drawn from an output to an input; handles are the ports' ids. */
export type CanvasEdgeData = {
  variableType: string
  /** A quality gate's retry edge (`retry_source_output_id`), not the input's feed. */
  retry?: boolean
}

export type CanvasEdge = Edge<CanvasEdgeData>

/** The document the editor edits and undoes: everything the flow file will say. */
export interface EditorDoc {
  flow: FileFlowFields
  nodes: CanvasNode[]
  /** Whether the file had a `nodes` field; a file without one gets none back when still empty. */
  hadNodes: boolean
}

/** Micro-credits, as the service and the executor count them. */
export type Micro = number
